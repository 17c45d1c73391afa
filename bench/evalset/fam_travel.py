"""Passenger rules for fictional airlines, rail and ferry operators.

Carriers publish the same headings (baggage, check-in, refunds, delays) with different limits and fees, which
is exactly where people ask "how much can I take" and expect the right carrier's number.
"""

from __future__ import annotations

from .schema import Family, fact


def _allowance(r, e):
    return {
        "n": r.choice(["one bag", "two bags"]),
        "kg": str(r.choice([20, 23, 25, 30, 32])),
        "fare": r.choice(["Standard", "Flex", "Classic"]),
    }


def _excess(r, e):
    return {"fee": str(r.choice([8, 10, 12, 15, 20])), "max": str(r.choice([32, 35, 40]))}


def _dims(r, e):
    return {"cm": str(r.choice([150, 158, 170, 200]))}


def _cabinsize(r, e):
    return {"dims": r.choice(["55 x 40 x 20", "56 x 45 x 25", "55 x 35 x 25", "60 x 40 x 25"])}


def _cabinkg(r, e):
    return {"kg": str(r.choice([7, 8, 10, 12, 15]))}


def _liquids(r, e):
    return {"ml": str(r.choice([100, 150, 250]))}


def _online(r, e):
    return {"h": str(r.choice([24, 30, 36, 48, 72]))}


def _desk(r, e):
    return {"m": str(r.choice([30, 40, 45, 60]))}


def _gate(r, e):
    return {"g": str(r.choice([2, 5, 10, 15, 20]))}


def _petcabin(r, e):
    return {"kg": str(r.choice([6, 8, 10, 12]))}


def _petfee(r, e):
    return {"fee": str(r.choice([25, 30, 45, 60, 75]))}


def _petdocs(r, e):
    return {"d": str(r.choice([21, 28, 30]))}


def _change(r, e):
    return {"fee": str(r.choice([20, 35, 45, 50, 70])), "fare": r.choice(["Standard", "Saver", "Basic"])}


def _refund(r, e):
    return {"h": str(r.choice([2, 12, 24, 48]))}


def _voucher(r, e):
    return {"m": str(r.choice([6, 12, 18, 24]))}


def _alone(r, e):
    return {"age": str(r.choice([12, 14, 15, 16]))}


def _infant(r, e):
    return {
        "price": r.choice(["free of charge", "a flat fee of 25", "10% of the adult fare", "a flat fee of 15"]).replace(
            "fee of ", f"fee of {e['cur']}"
        )
    }


def _childfare(r, e):
    return {"age": str(r.choice([11, 12, 15])), "pct": str(r.choice([10, 25, 30, 50]))}


def _comp(r, e):
    return {"h": str(r.choice([2, 3, 4])), "amt": str(r.choice([50, 125, 250, 400]))}


def _meals(r, e):
    return {"h": str(r.choice([2, 3, 4]))}


def _claimwin(r, e):
    return {"d": str(r.choice([28, 30, 60, 90]))}


FACTS = (
    fact(
        "bag-allowance",
        "Checked Baggage",
        _allowance,
        says=[
            "The free checked baggage allowance is {n} of up to {kg} kg per passenger on {fare} fares.",
            "On {fare} fares, each passenger's free checked baggage allowance is {n}, weighing up to {kg} kg.",
        ],
        lex=["What is the free checked baggage allowance per passenger on {name}?"],
        para=["How much luggage can I put in the hold with {name} without paying extra?"],
        topic="the checked baggage allowance",
        answer="{kg} kg",
        xref=(
            "Cabin Baggage",
            [
                "Anything over the cabin limits has to go in the hold and counts towards your checked baggage "
                "allowance.",
            ],
        ),
    ),
    fact(
        "bag-excess",
        "Checked Baggage",
        _excess,
        says=[
            "Excess weight is charged at {cur}{fee} per kilogram, up to a maximum of {max} kg per bag.",
            "Each kilogram of excess weight costs {cur}{fee}, and no single bag may exceed {max} kg.",
        ],
        lex=["How much is excess weight charged per kilogram on {name}?"],
        para=["How much extra will {name} ask for if my suitcase is too heavy?"],
        topic="excess weight charges",
        answer="{cur}{fee}",
    ),
    fact(
        "bag-dims",
        "Checked Baggage",
        _dims,
        says=[
            "Checked bags must not exceed {cm} cm in length, width and height combined.",
            "The combined length, width and height of a checked bag must not exceed {cm} cm.",
        ],
        lex=["What is the maximum combined length, width and height of checked bags on {name}?"],
        para=["How big can my suitcase be when travelling with {name}?"],
        topic="the size limit for checked bags",
        answer="{cm} cm",
    ),
    fact(
        "cabin-size",
        "Cabin Baggage",
        _cabinsize,
        says=[
            "One cabin bag of up to {dims} cm is allowed, plus a small personal item that fits under the seat.",
            "You may bring one cabin bag measuring no more than {dims} cm and one small personal item for under "
            "the seat.",
        ],
        lex=["What size cabin bag is allowed on {name}?"],
        para=["What are the maximum measurements for carry-on luggage with {name}?"],
        topic="the cabin bag size",
        answer="{dims} cm",
    ),
    fact(
        "cabin-weight",
        "Cabin Baggage",
        _cabinkg,
        says=[
            "The cabin bag must weigh no more than {kg} kg and you must be able to lift it into the rack yourself.",
            "Cabin bags are limited to {kg} kg, and you must be able to lift yours into the rack unaided.",
        ],
        lex=["How much can the cabin bag weigh on {name}?"],
        para=["What's the heaviest carry-on I can bring aboard with {name}?"],
        topic="the cabin bag weight limit",
        answer="{kg} kg",
    ),
    fact(
        "cabin-liquids",
        "Cabin Baggage",
        _liquids,
        says=[
            "Liquids must be in containers of {ml} ml or less, carried together in a single clear resealable bag.",
            "Containers of liquid may hold up to {ml} ml each and must fit in one clear resealable bag.",
        ],
        lex=["What size liquid containers are allowed in cabin bags on {name}?"],
        para=["How much shampoo or toiletries can I bring in my hand luggage on {name}?"],
        topic="the rules on liquids",
        answer="{ml} ml",
    ),
    fact(
        "checkin-online",
        "Check-in and Boarding",
        _online,
        says=[
            "Online check-in opens {h} hours before departure and closes two hours before it.",
            "You can check in online from {h} hours before departure until two hours before it.",
        ],
        lex=["How many hours before departure does online check-in open on {name}?"],
        para=["How early can I confirm my seat on the web with {name}?"],
        topic="when online check-in opens",
        answer="{h} hours",
    ),
    fact(
        "checkin-desk",
        "Check-in and Boarding",
        _desk,
        says=[
            "Check-in desks close {m} minutes before departure without exception.",
            "The check-in desks close strictly {m} minutes before departure.",
        ],
        lex=["How many minutes before departure do check-in desks close on {name}?"],
        para=["What's the latest I can drop my luggage at the counter with {name}?"],
        topic="when the check-in desks close",
        answer="{m} minutes",
    ),
    fact(
        "checkin-gate",
        "Check-in and Boarding",
        _gate,
        says=[
            "Boarding gates close {g} minutes before departure, and late passengers will not be accepted.",
            "Passengers who reach the boarding gate less than {g} minutes before departure will not be accepted.",
        ],
        lex=["How many minutes before departure do boarding gates close on {name}?"],
        para=["How long before leaving do they stop letting people on with {name}?"],
        topic="when the boarding gate closes",
        answer="{g} minutes",
    ),
    fact(
        "pets-cabin",
        "Travelling with Pets",
        _petcabin,
        says=[
            "Dogs and cats weighing up to {kg} kg, including the carrier, may travel with you on board.",
            "Cats and dogs may travel on board with you if they weigh {kg} kg or less including the carrier.",
        ],
        lex=["How heavy can a dog or cat be, including the carrier, to travel on board with {name}?"],
        para=["Can my small animal sit with me during the journey with {name}, and what's the limit?"],
        topic="the weight limit for pets on board",
        answer="{kg} kg",
    ),
    fact(
        "pets-fee",
        "Travelling with Pets",
        _petfee,
        says=[
            "A fee of {cur}{fee} is charged per animal per journey.",
            "Each animal is charged a fee of {cur}{fee} per journey.",
        ],
        lex=["What is the pet fee per journey on {name}?"],
        para=["How much does it cost to bring my dog along with {name}?"],
        topic="the pet fee",
        answer="{cur}{fee}",
        xref=(
            "Changes and Refunds",
            [
                "Pet fees follow the same change and refund rules as the ticket they were bought with.",
            ],
        ),
    ),
    fact(
        "pets-docs",
        "Travelling with Pets",
        _petdocs,
        says=[
            "Animals need a valid pet passport and a rabies vaccination given at least {d} days before travel.",
            "A rabies vaccination at least {d} days before travel and a valid pet passport are required for every "
            "animal.",
        ],
        lex=["How many days before travel must a pet's rabies vaccination be given for {name}?"],
        para=["What jabs and paperwork does my dog need to go with {name}?"],
        topic="the documents a pet needs",
        answer="{d} days",
    ),
    fact(
        "refund-change",
        "Changes and Refunds",
        _change,
        says=[
            "Changes to {fare} tickets cost {cur}{fee} per person, plus any difference in fare.",
            "{fare} tickets can be changed for {cur}{fee} per person, plus any difference in fare.",
        ],
        lex=["How much does it cost to change a {fare} ticket on {name}?"],
        para=["What's the charge for moving my trip to another date with {name}?"],
        topic="the change fee",
        answer="{cur}{fee}",
    ),
    fact(
        "refund-cooling",
        "Changes and Refunds",
        _refund,
        says=[
            "Bookings cancelled within {h} hours of purchase are refunded in full.",
            "If you cancel within {h} hours of purchase, the booking is refunded in full.",
        ],
        lex=["Within how many hours of purchase can a booking be cancelled and refunded in full on {name}?"],
        para=["If I change my mind right after buying with {name}, will I get every penny back?"],
        topic="the full-refund window",
        answer="{h} hours",
    ),
    fact(
        "refund-voucher",
        "Changes and Refunds",
        _voucher,
        says=[
            "Travel vouchers issued instead of refunds are valid for {m} months from the date of issue.",
            "Vouchers issued in place of refunds remain valid for {m} months from issue.",
        ],
        lex=["How long are travel vouchers issued instead of refunds valid on {name}?"],
        para=["How long do I have to use the credit {name} gives me in lieu of cash?"],
        topic="voucher validity",
        answer="{m} months",
    ),
    fact(
        "kids-alone",
        "Travelling with Children",
        _alone,
        says=[
            "Children aged {age} and over may travel alone; younger children must be accompanied by someone aged "
            "16 or over.",
            "Only children aged {age} or older may travel alone, and younger ones must be accompanied by someone "
            "aged 16 or over.",
        ],
        lex=["From what age may children travel alone with {name}?"],
        para=["At what age can my kid make the trip on their own with {name}?"],
        topic="the minimum age to travel alone",
        answer="{age}",
    ),
    fact(
        "kids-infant",
        "Travelling with Children",
        _infant,
        says=[
            "Infants under two travel on an adult's lap for {price}.",
            "An infant under two sitting on an adult's lap travels for {price}.",
        ],
        lex=["What do infants under two pay to travel on an adult's lap with {name}?"],
        para=["How much do I pay for a baby held on my knee with {name}?"],
        topic="the infant fare",
        answer="{price}",
    ),
    fact(
        "kids-discount",
        "Travelling with Children",
        _childfare,
        says=[
            "Children aged 2 to {age} receive a {pct}% discount on the adult fare.",
            "A {pct}% discount on the adult fare applies to children aged 2 to {age}.",
        ],
        lex=["What discount on the adult fare do children receive with {name}?"],
        para=["How much cheaper is a kid's ticket with {name}?"],
        topic="the child discount",
        answer="{pct}%",
    ),
    fact(
        "delay-comp",
        "Delays and Compensation",
        _comp,
        says=[
            "If you arrive more than {h} hours late, you are entitled to compensation of {cur}{amt} per passenger.",
            "Passengers arriving over {h} hours late are entitled to {cur}{amt} each in compensation.",
        ],
        lex=["How late must I arrive to be entitled to compensation from {name}?"],
        para=["When does {name} owe me money if my trip runs way behind schedule, and how much?"],
        topic="compensation for delays",
        answer="{cur}{amt}",
        xref=(
            "Changes and Refunds",
            [
                "If a long delay means you no longer want to travel, you can cancel; compensation rules are in "
                "Delays and Compensation.",
            ],
        ),
    ),
    fact(
        "delay-meals",
        "Delays and Compensation",
        _meals,
        says=[
            "Meal vouchers are handed out once a delay exceeds {h} hours.",
            "Once a delay exceeds {h} hours, staff hand out meal vouchers.",
        ],
        lex=["When are meal vouchers handed out for a delay on {name}?"],
        para=["Will {name} feed me if I'm stuck waiting, and after how long?"],
        topic="meal vouchers",
        answer="{h} hours",
    ),
    fact(
        "delay-claims",
        "Delays and Compensation",
        _claimwin,
        says=[
            "Claims must be made within {d} days of the journey using the online claim form.",
            "Use the online claim form within {d} days of the journey; later claims are not accepted.",
        ],
        lex=["Within how many days of the journey must claims be made using the online claim form for {name}?"],
        para=["How long after my trip do I have to ask {name} for money back?"],
        topic="the deadline for claims",
        answer="{d} days",
    ),
)

SECTIONS = (
    "Checked Baggage",
    "Cabin Baggage",
    "Check-in and Boarding",
    "Travelling with Pets",
    "Changes and Refunds",
    "Travelling with Children",
    "Delays and Compensation",
)

FILLERS = {
    "Checked Baggage": (
        "Label every bag with your name and a contact phone number, inside and out, in case the outer tag is torn "
        "off in handling.",
        "Sports equipment, musical instruments and pushchairs have their own rules, which are listed in the special "
        "items table.",
        "Valuables, medicines and electronic devices with lithium batteries should travel with you rather than in "
        "the hold.",
        "Fragile items are carried at your own risk unless they are packed in a hard-sided case.",
        "If your bag does not arrive, report it at the baggage service desk before leaving the arrivals area.",
        "Bags are weighed at the desk and that reading is the one that counts, so weigh yours at home to avoid "
        "surprises.",
        "Locks must be of a type that security staff can open without damaging the bag.",
        "Extra bags can be added in Manage Booking up to the day before travel, which is cheaper than paying at the "
        "desk.",
    ),
    "Cabin Baggage": (
        "Space in the overhead racks is limited, so on busy services some bags may be tagged and moved to the hold "
        "at the door.",
        "Coats, a small bag of duty-free shopping and a walking aid do not count towards your allowance.",
        "Sharp objects, tools and anything that could be used as a weapon are not allowed in the cabin.",
        "Essential medicines may be carried in larger quantities if you have a prescription or a doctor's letter.",
        "Please keep aisles and emergency exits clear of bags at all times.",
        "Laptops and tablets may need to be taken out of your bag at the security check.",
        "If your cabin bag turns out to be too large at the gate, it will be checked in and a handling charge may "
        "apply.",
        "Duty-free purchases made after security may be carried on board in their sealed bags.",
    ),
    "Check-in and Boarding": (
        "Have your booking reference and a valid photo ID ready, and check the entry rules for your destination well "
        "in advance.",
        "Passengers needing assistance should tell us at least two days before travel so that help can be arranged "
        "at each station.",
        "Boarding passes on your phone are accepted everywhere, but keep a screenshot in case the app cannot connect.",
        "Families with young children and passengers needing assistance are invited to board first.",
        "Seat selection is free for some fares and paid for others; seats chosen at check-in are always free.",
        "Arrive early at busy times of year, when queues at security and passport control are longer.",
        "If the name on your booking does not match your passport, contact us before travelling to correct it.",
        "Boarding passes are personal and may not be transferred to another person.",
    ),
    "Travelling with Pets": (
        "Animals must stay in their carrier for the whole journey and may not occupy a seat.",
        "Assistance dogs travel free of charge and are not subject to the usual weight limit.",
        "Only a limited number of animals are accepted on each departure, so add your pet to the booking early.",
        "Make sure your pet has had water and a chance to relieve itself shortly before the journey.",
        "Some destinations have additional rules, such as tapeworm treatment, which are your responsibility to check.",
        "Bring water and a small amount of food for your pet, plus absorbent pads in case of accidents.",
        "Pets cannot travel in the same row as an emergency exit.",
        "If your pet becomes distressed, ask the crew for help rather than opening the carrier.",
    ),
    "Changes and Refunds": (
        "Changes can be made online in Manage Booking, or by phone for a small service charge.",
        "Taxes and charges are always refundable, even on tickets that are otherwise non-refundable.",
        "Name changes are treated as a new booking, apart from corrections of minor spelling mistakes.",
        "If we cancel your journey, you can choose between a full refund and rebooking at no extra cost.",
        "Refunds are made to the original payment method and can take up to two weeks to appear.",
        "A change can only be made before the original departure; once it has left, the ticket has no further value.",
        "If you booked through a travel agent, changes and refunds must be handled by the agent.",
        "Upgrades can be bought as a change to your booking, subject to availability.",
    ),
    "Travelling with Children": (
        "Every child needs their own travel document, even when travelling on a parent's booking.",
        "Pushchairs can be taken to the door and are returned to you as you disembark.",
        "Children's meals can be pre-ordered on longer journeys at least a day in advance.",
        "A child travelling with only one parent may need a consent letter from the other parent for some "
        "destinations.",
        "Car seats approved for travel can be used on a purchased seat, subject to the crew's instructions.",
        "Baby changing facilities are available on most services and at all major stations and terminals.",
        "Activity packs for young children are available on request on longer journeys.",
        "Families are seated together free of charge wherever possible when they book on the same reservation.",
    ),
    "Delays and Compensation": (
        "We will keep you informed about delays by text message and email, using the contact details in your booking.",
        "Compensation is not payable when a delay is caused by extraordinary circumstances such as severe weather "
        "or strikes.",
        "Keep receipts for reasonable expenses, such as meals and local transport, caused by a long delay.",
        "If you miss a connection booked on the same ticket, we will rebook you on the next available departure.",
        "Your rights under passenger protection regulations are not affected by anything in this section.",
        "Departure boards and our app show the latest information; announcements in the terminal may lag slightly "
        "behind.",
        "If your journey is cancelled, you can choose to travel later on the same day at no extra charge.",
        "Compensation is paid by bank transfer, or as a voucher of higher value if you prefer.",
    ),
}

COMMON = (
    "These rules form part of the conditions of carriage and apply to all bookings made after their publication.",
    "Partner services operated by other carriers may apply different rules, shown at the time of booking.",
    "For anything not covered here, contact customer service before you travel.",
)

INTRO = (
    "These are the passenger rules for {name}. Please read them before you travel.",
    "Everything you need to know before travelling with {name}, from baggage to delays.",
)


def _carrier(key, name, cur):
    return {
        "key": f"travel-{key}",
        "name": name,
        "cur": cur,
        "ref": name,
        "title": f"{name} Passenger Rules",
        "filename": f"travel-{key}.md",
    }


ENTITIES = (
    _carrier("skyline-air", "Skyline Air", "€"),
    _carrier("aurora-airways", "Aurora Airways", "£"),
    _carrier("borealis-rail", "Borealis Rail", "€"),
    _carrier("tidewater-ferries", "Tidewater Ferries", "£"),
    _carrier("cobalt-coaches", "Cobalt Coaches", "€"),
)

OPENERS = (
    ("I'm travelling with {ref} next week.", "Exciting! What do you need to check before you go?"),
    ("I've just booked a trip on {ref}.", "Nice. Anything you want to know about their rules?"),
    ("My parents are going away with {ref} next month.", "Happy to help them prepare. What do they need to know?"),
)

FAMILY = Family(
    name="travel",
    title="{title}",
    sections=SECTIONS,
    facts=FACTS,
    fillers=FILLERS,
    common=COMMON,
    intro=INTRO,
    entities=ENTITIES,
    openers=OPENERS,
    pair="I'm choosing between {a} and {b} for my trip.",
)
