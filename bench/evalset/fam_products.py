"""User manuals for fictional household and personal devices.

Every manual has the same headings (Installation, Warranty, Troubleshooting, ...) and much the same
boilerplate, as real manuals from one retailer's catalogue do; the facts that tell them apart are the
numbers, button names and error codes.
"""

from __future__ import annotations

from .schema import Family, fact

BUTTONS = ["Power", "Mode", "Start", "Menu", "Wi-Fi", "Timer", "Light"]
COLOURS = ["blue", "white", "amber", "green", "purple"]

ERRORS = [
    (
        "the internal temperature sensor has overheated",
        "it gets far too hot",
        "let the unit cool for half an hour before restarting",
    ),
    (
        "the wireless connection to the app has dropped",
        "it loses its link with my mobile",
        "move the router closer or re-pair the device",
    ),
    (
        "the motor is blocked or jammed",
        "something is stuck in the mechanism",
        "switch off and remove the obstruction by hand",
    ),
    (
        "the battery charge is critically low",
        "it is almost out of juice",
        "connect the charger immediately",
    ),
    (
        "a firmware update failed partway through",
        "a software upgrade did not finish",
        "retry the update from the app over a stable connection",
    ),
    (
        "the main sensor window is obstructed or dirty",
        "the detector is covered in grime",
        "clean the sensor window with a dry cloth",
    ),
]

EXCLUSIONS = [
    "damage caused by limescale, drops, or unauthorised repairs",
    "cosmetic wear, water ingress, and use with third-party accessories",
    "commercial or rental use, accidental damage, and consumable parts",
    "damage from power surges, misuse, or modification of the firmware",
]

AGENTS = [
    ("warm soapy water", "abrasive pads"),
    ("a mix of equal parts white vinegar and water", "bleach"),
    ("isopropyl alcohol wipes", "solvent-based sprays"),
    ("a mild pH-neutral detergent", "scouring powder"),
]


def _clearance(r, e):
    return {"cm": str(r.choice([5, 10, 15, 20, 25, 30, 40, 50]))}


def _pairing(r, e):
    return {"digits": str(r.choice([4, 6, 8]))}


def _power(r, e):
    return {"amps": r.choice(["10", "13", "16"])}


def _modes(r, e):
    return {"n": str(r.randint(3, 9)), "mode": r.choice(["Eco", "Standard", "Quiet", "Auto", "Boost", "Comfort"])}


def _autooff(r, e):
    return {"mins": str(r.choice([5, 10, 15, 20, 30, 45, 60]))}


def _childlock(r, e):
    return {"btn": r.choice(BUTTONS), "secs": str(r.choice([2, 3, 4, 5]))}


def _part(r, e):
    return {"weeks": str(r.choice([4, 6, 8, 10, 12, 26]))}


def _clean(r, e):
    agent, avoid = r.choice(AGENTS)
    return {"agent": agent, "avoid": avoid}


def _service(r, e):
    return {"months": str(r.choice([6, 12, 18, 24]))}


def _reset(r, e):
    b1, b2 = r.sample(BUTTONS, 2)
    return {"b1": b1, "b2": b2, "secs": str(r.choice([5, 8, 10, 12, 15])), "colour": r.choice(COLOURS)}


def _error(r, e):
    meaning, desc, remedy = r.choice(ERRORS)
    code = f"{r.choice(['E', 'F', 'Err-'])}{r.randint(1, 29):02d}"
    return {"code": code, "meaning": meaning, "desc": desc, "remedy": remedy}


def _support(r, e):
    phone = f"0800 {r.randint(100, 999)} {r.randint(1000, 9999)}"
    hours = r.choice(
        [
            "weekdays 8:00 to 20:00",
            "Monday to Saturday 9:00 to 17:30",
            "every day 7:00 to 22:00",
            "weekdays 9:00 to 18:00",
        ]
    )
    return {"phone": phone, "hours": hours}


def _warranty(r, e):
    return {"months": str(r.choice([12, 18, 24, 36, 60]))}


def _register(r, e):
    return {"days": str(r.choice([14, 28, 30, 60, 90])), "ext": str(r.choice([6, 12, 24]))}


def _excl(r, e):
    return {"excl": r.choice(EXCLUSIONS)}


def _weight(r, e):
    lo, hi = (float(x) for x in e["kg"].split("-"))
    return {"kg": f"{r.uniform(lo, hi):.1f}"}


def _temp(r, e):
    return {"lo": str(r.choice([0, 5, 10])), "hi": str(r.choice([30, 35, 40, 45]))}


def _watts(r, e):
    lo, hi = (int(x) for x in e["watts"].split("-"))
    return {
        "w": str(r.randrange(lo, hi, 5) if hi - lo > 10 else r.randint(lo, hi)),
        "sb": r.choice(["0.3", "0.5", "0.8"]),
    }


def _age(r, e):
    return {"age": str(r.choice([8, 12, 14, 16]))}


def _cord(r, e):
    who = r.choice(
        [
            "the manufacturer, its service agent or a similarly qualified person",
            f"an authorised {e['brand']} service centre",
            "a qualified electrician using a genuine replacement part",
        ]
    )
    return {"who": who}


def _cutout(r, e):
    return {"t": str(r.choice([95, 110, 120, 135, 150]))}


FACTS = (
    fact(
        "safety-age",
        "Safety Information",
        _age,
        says=[
            "Children under {age} years must not operate the {noun} without adult supervision.",
            "The {name} may be operated by children aged {age} and above only under adult supervision.",
        ],
        lex=[
            "At what age can children operate the {item} without adult supervision?",
            "What is the minimum age for children to operate the {item}?",
        ],
        para=["Is the {item} OK for kids to use unattended, and from how old?"],
        topic="the minimum age for children",
        answer="{age}",
    ),
    fact(
        "safety-cord",
        "Safety Information",
        _cord,
        says=[
            "If the supply cord is damaged, it must be replaced by {who} in order to avoid a hazard.",
            "A damaged supply cord may only be replaced by {who}; do not attempt a repair with tape.",
        ],
        lex=["Who must replace a damaged supply cord on the {item}?"],
        para=["If the cable on my {item} gets frayed, who is allowed to swap it?"],
        topic="replacing a damaged cord",
        answer="{who}",
    ),
    fact(
        "safety-cutout",
        "Safety Information",
        _cutout,
        says=[
            "A thermal cut-out disconnects power if internal components exceed {t} °C, and it resets automatically "
            "once the {noun} has cooled.",
            "Internal components are protected by a thermal cut-out set to {t} °C, which disconnects power until "
            "the {noun} has cooled.",
        ],
        lex=["At what temperature does the thermal cut-out disconnect power on the {item}?"],
        para=["How hot can the insides of the {item} get before its overheat protection kicks in?"],
        topic="the thermal cut-out temperature",
        answer="{t} °C",
        xref=(
            "Technical Specifications",
            [
                "Details of the thermal protection are listed under Safety Information.",
            ],
        ),
    ),
    fact(
        "install-clearance",
        "Installation",
        _clearance,
        says=[
            "Position the {noun} so that at least {cm} cm of clear space remains on every side during operation.",
            "Keep a gap of no less than {cm} cm between the {name} and any surrounding surface while it is running; "
            "the housing needs that space to shed heat.",
        ],
        lex=[
            "How much clear space must remain around the {item} during operation?",
            "What gap should be kept between the {item} and surrounding surfaces?",
        ],
        para=[
            "How close to the wall or furniture can I put the {item}?",
            "How tightly can the {item} be squeezed into a corner?",
        ],
        topic="the required clearance",
        answer="{cm} cm",
    ),
    fact(
        "install-pairing",
        "Installation",
        _pairing,
        says=[
            "To connect the {noun} to your phone, open the {app} app, tap Add Device and enter the {digits}-digit "
            "pairing code printed on the label under the base.",
            "Pairing is done through the {app} app: choose Add Device, then type in the {digits}-digit code from "
            "the sticker on the underside of the {noun}.",
        ],
        lex=["How do I pair the {item} with the {app} app?", "Where is the pairing code for the {item}?"],
        para=["How do I link the {item} to my smartphone?", "What do I need to hook the {item} up to my mobile?"],
        topic="pairing with the app",
        answer="{digits}-digit",
    ),
    fact(
        "install-power",
        "Installation",
        _power,
        says=[
            "Plug the {noun} directly into an earthed socket rated at {amps} A or more; extension leads and "
            "multi-way adaptors are not supported.",
            "The {name} must be connected straight to a grounded {amps} A outlet, never through an extension "
            "lead or travel adaptor.",
        ],
        lex=["What socket rating does the {item} need, and can I use an extension lead?"],
        para=["Can I run the {item} off a power strip, and what electrical supply does it require?"],
        topic="the socket requirements",
        answer="{amps} A",
    ),
    fact(
        "use-modes",
        "Daily Use",
        _modes,
        says=[
            "The {name} offers {n} preset modes; {mode} is selected by default each time it is switched on.",
            "Out of the box there are {n} preset modes to choose from, and the {noun} starts in {mode} mode "
            "unless you pick another one.",
        ],
        lex=["How many preset modes does the {item} offer?", "Which preset mode is selected by default on the {item}?"],
        para=["How many built-in programs does the {item} have, and which one is active when I power it up?"],
        topic="the preset modes",
        answer="{n}",
    ),
    fact(
        "use-autooff",
        "Daily Use",
        _autooff,
        says=[
            "To save energy, the {noun} switches itself off after {mins} minutes without any input.",
            "If nobody touches the controls for {mins} minutes, the {name} shuts down on its own to save energy.",
        ],
        lex=["After how many minutes without input does the {item} switch itself off to save energy?"],
        para=["When does the {item} power down automatically if left idle?"],
        topic="the automatic switch-off",
        answer="{mins} minutes",
    ),
    fact(
        "use-childlock",
        "Daily Use",
        _childlock,
        says=[
            "Hold the {btn} button for {secs} seconds to engage the child lock; the padlock icon lights up while "
            "it is active.",
            "The child lock is toggled by pressing and holding {btn} for {secs} seconds until the padlock symbol "
            "appears.",
        ],
        lex=["How do I engage the child lock on the {item}?"],
        para=["How can I stop kids fiddling with the settings on the {item}?"],
        topic="the child lock",
        answer="{btn}",
    ),
    fact(
        "maint-part",
        "Cleaning and Maintenance",
        _part,
        says=[
            "Replace the {part} every {weeks} weeks of regular use, or sooner if you notice reduced performance.",
            "Treat the {part} as a wear item: swap it out every {weeks} weeks, and more often under heavy use.",
        ],
        lex=[
            "How often should the {part} be replaced on the {item}?",
            "How often should I swap out the {part} on the {item}?",
        ],
        para=["How frequently does the consumable component of the {item} need changing?"],
        topic="the {part} replacement interval",
        answer="{weeks} weeks",
        xref=(
            "Troubleshooting",
            [
                "A worn {part} is the most common cause of reduced performance; the replacement interval is given "
                "under Cleaning and Maintenance.",
            ],
        ),
    ),
    fact(
        "maint-clean",
        "Cleaning and Maintenance",
        _clean,
        says=[
            "Clean the exterior with a soft cloth dampened with {agent}; never use {avoid}, as they damage the finish.",
            "Wipe the outer housing using {agent} on a soft cloth, and avoid {avoid} at all costs.",
        ],
        lex=[
            "What should I use to clean the exterior of the {item}?",
            "What should I put on a soft cloth to wipe the outer housing of the {item}?",
        ],
        para=["Which product is safe for freshening up the outside of the {item}?"],
        topic="how to clean the exterior",
        answer="{agent}",
    ),
    fact(
        "maint-service",
        "Cleaning and Maintenance",
        _service,
        says=[
            "Book a professional inspection at an authorised service centre every {months} months.",
            "An authorised service centre should carry out a professional inspection of the {name} every {months} "
            "months.",
        ],
        lex=["How often does the {item} need a professional inspection at an authorised service centre?"],
        para=["How regularly should a certified technician look over the {item}?"],
        topic="the professional inspection interval",
        answer="{months} months",
    ),
    fact(
        "trouble-reset",
        "Troubleshooting",
        _reset,
        says=[
            "To perform a factory reset, hold {b1} and {b2} together for {secs} seconds until the status light "
            "flashes {colour}.",
            "A factory reset clears all settings: press and hold {b1} and {b2} at the same time for {secs} "
            "seconds, and the status light blinks {colour} to confirm.",
        ],
        lex=["How do I perform a factory reset on the {item}?"],
        para=["How can I wipe the {item} back to how it came out of the box?"],
        topic="the factory reset procedure",
        answer="{b1} and {b2}",
        xref=(
            "Daily Use",
            [
                "If the {noun} stops responding to the panel altogether, see Troubleshooting for how to restore the "
                "factory settings.",
            ],
        ),
    ),
    fact(
        "trouble-error",
        "Troubleshooting",
        _error,
        says=[
            "Error code {code} means {meaning}; {remedy}.",
            "If the display shows {code}, {meaning}. To clear it, {remedy}.",
        ],
        lex=[
            "What does error code {code} mean on the {item}?",
            "What does it mean when the display of the {item} shows {code}, and how do I clear it?",
        ],
        para=["What warning appears on the {item} when {desc}?"],
        topic="error code {code}",
        answer="{code}",
    ),
    fact(
        "trouble-support",
        "Troubleshooting",
        _support,
        says=[
            "If the problem persists, call {brand} customer support on {phone} ({hours}).",
            "Still stuck? The {brand} support line, {phone}, is staffed {hours}.",
        ],
        lex=[
            "What is the customer support phone number for the {item}?",
            "What is the {brand} support line number, and when is it staffed?",
        ],
        para=["Who can I ring for help with the {item}, and when are they reachable?"],
        topic="the support phone number",
        answer="{phone}",
    ),
    fact(
        "warranty-length",
        "Warranty",
        _warranty,
        says=[
            "The {name} is covered by a limited warranty of {months} months against manufacturing defects, "
            "starting on the date of purchase.",
            "{brand} covers the {noun} against manufacturing defects for {months} months from the purchase date "
            "under its limited warranty.",
        ],
        lex=["How many months is the limited warranty on the {item}?"],
        para=["For how long will the maker fix faults in the {item} free of charge?"],
        topic="the warranty period",
        answer="{months} months",
        xref=(
            "Troubleshooting",
            [
                "Repairs outside the coverage period set out under Warranty are charged at the standard workshop rate.",
                "Once the period described in the Warranty section has ended, repairs are quoted individually.",
            ],
        ),
    ),
    fact(
        "warranty-register",
        "Warranty",
        _register,
        says=[
            "Register the {noun} on the {brand} website within {days} days of purchase to extend coverage by a "
            "further {ext} months.",
            "Registering online within {days} days of buying adds {ext} months of extra coverage.",
        ],
        lex=["Within how many days must I register the {item} to extend coverage?"],
        para=["Is there a deadline for signing up my {item} to get additional protection?"],
        topic="the registration deadline",
        answer="{days} days",
    ),
    fact(
        "warranty-excl",
        "Warranty",
        _excl,
        says=["The warranty does not cover {excl}.", "Excluded from the warranty are {excl}."],
        lex=["What does the warranty not cover on the {item}?", "What is excluded from the warranty on the {item}?"],
        para=["Which kinds of harm to the {item} will the manufacturer refuse to fix at no cost?"],
        topic="what the warranty excludes",
        answer="{excl}",
    ),
    fact(
        "spec-weight",
        "Technical Specifications",
        _weight,
        says=["The {noun} weighs {kg} kg without accessories.", "Its net weight is {kg} kg, excluding accessories."],
        lex=["How much does the {item} weigh without accessories?", "What is the net weight of the {item}?"],
        para=["How heavy is the {item}?"],
        topic="the weight",
        answer="{kg} kg",
    ),
    fact(
        "spec-temp",
        "Technical Specifications",
        _temp,
        says=[
            "The {noun} is designed to operate at ambient temperatures from {lo} °C to {hi} °C.",
            "The operating temperature range is {lo} °C to {hi} °C; outside this band the unit limits its output.",
        ],
        lex=["What is the operating temperature range of the {item}?"],
        para=["How cold or warm can the room be when I use the {item}?"],
        topic="the operating temperature range",
        answer="{lo} °C to {hi} °C",
    ),
    fact(
        "spec-power",
        "Technical Specifications",
        _watts,
        says=[
            "Rated power consumption is {w} W in use and {sb} W in standby.",
            "The {name} draws {w} W at its rated load and {sb} W on standby.",
        ],
        lex=[
            "What is the rated power consumption of the {item}?",
            "How much does the {item} draw at its rated load and on standby?",
        ],
        para=["How much electricity does the {item} use while running and when idle?"],
        topic="the power consumption",
        answer="{w} W",
    ),
)

SECTIONS = (
    "Safety Information",
    "Installation",
    "Daily Use",
    "Cleaning and Maintenance",
    "Troubleshooting",
    "Warranty",
    "Technical Specifications",
)

FILLERS = {
    "Safety Information": (
        "Read these instructions in full before using the {noun} for the first time, and keep them somewhere you "
        "can find them again; they apply to every unit in the {brand} range sold in this region.",
        "Never operate the {noun} with wet hands, and do not leave it running unattended for long periods, "
        "particularly in rooms where pets or small children spend time.",
        "Use only the accessories and spare parts supplied or recommended by {brand}. Parts from other sources "
        "may fit mechanically but have not been tested for electrical safety.",
        "Keep the packaging materials, including plastic bags and foam inserts, away from children, and dispose "
        "of them according to your local recycling rules.",
        "If the {noun} has been dropped, shows visible cracks, or smells of burning, unplug it at once and do not "
        "use it again until it has been checked.",
        "Do not cover the {noun} while it is in use, and never place it on soft surfaces such as beds or sofas that "
        "could block the vents.",
        "Anyone with reduced physical or sensory capabilities should use the {noun} only after being shown how to "
        "do so safely.",
        "Keep the {noun} away from flammable materials, including curtains, paper and aerosol cans, at all times.",
    ),
    "Installation": (
        "Unpack the {noun} carefully and check that nothing was damaged in transit before you throw away the box; "
        "report any missing items to your retailer as soon as possible.",
        "Choose a firm, level surface that can take the weight of the {noun} and is away from direct sunlight, "
        "radiators, and sources of steam or splashing water.",
        "Remove all protective films and transport locks before the first start. A few units leave the factory "
        "with a small amount of test residue, which is harmless.",
        "Once the {noun} is in place, let it stand for a while so that it reaches room temperature, especially if "
        "it was stored in a cold car or garage.",
        "Firmware updates are offered automatically after setup. Accept them while the {noun} is connected to "
        "mains power so that the update is not interrupted.",
        "Keep the original box and packing pieces for a few weeks; they are the safest way to return the {noun} if "
        "anything is wrong.",
        "If you are installing the {noun} in a rented property, check with your landlord before drilling or fixing "
        "anything to the walls.",
        "Setup takes most people about a quarter of an hour, including creating the app account, although a slow "
        "network can stretch this.",
    ),
    "Daily Use": (
        "The control panel on the {name} is touch-sensitive, so a light tap is enough; pressing hard will not make "
        "it respond faster and may wear the coating.",
        "Most settings can be changed either from the panel or from the app, and changes made in one place are "
        "reflected in the other within a few seconds.",
        "A short beep confirms each command. If you prefer silence, the confirmation sounds can be turned off in "
        "the app under Preferences.",
        "For the best results, let the {noun} finish a cycle before changing modes; interrupting a cycle "
        "repeatedly puts unnecessary strain on the internal components.",
        "The display dims automatically at night according to the clock set during setup, and brightens again as "
        "soon as any button is touched.",
        "Your preferred settings are remembered between sessions, so in most cases you only need to choose them once.",
        "Routines and schedules can be created in the app, for example to run the {noun} automatically at the same "
        "time every day.",
        "If the {noun} behaves unexpectedly after a power cut, give it a minute to reconnect before changing any "
        "settings.",
    ),
    "Cleaning and Maintenance": (
        "Always disconnect the {noun} from mains power and let it cool down before cleaning or carrying out any "
        "maintenance.",
        "Regular care keeps the {name} running quietly and efficiently; a few minutes each week prevents most of "
        "the problems that reach our service desks.",
        "Do not put any part of the {noun} in the dishwasher unless it is explicitly marked as dishwasher-safe on "
        "the part itself.",
        "Genuine spare parts are available from the {brand} online shop and from authorised dealers, and each part "
        "carries a code on its packaging so you can reorder the right one.",
        "After cleaning, dry all surfaces thoroughly and reassemble the {noun} before reconnecting it, making sure "
        "every panel clicks firmly into place.",
        "Check the {noun} for loose parts or unusual noises every few weeks; small issues are much easier to fix "
        "when caught early.",
        "Store the {noun} in a dry, dust-free place if you do not plan to use it for a while, ideally in its "
        "original box.",
        "A maintenance reminder appears in the app when a service item is due, based on actual use rather than on "
        "the calendar alone.",
    ),
    "Troubleshooting": (
        "Before contacting support, check that the {noun} is plugged in, that the socket works with another "
        "appliance, and that the latest firmware is installed.",
        "Many intermittent faults disappear after a simple restart: switch the {noun} off, wait a moment, and "
        "switch it on again.",
        "The status light gives a quick indication of health. Steady green means normal operation, while a slowly "
        "pulsing light means the unit is waiting for input.",
        "Note down any code shown on the display and the time it appeared; this information helps the support team "
        "diagnose the fault much faster.",
        "Do not open the housing to investigate a fault yourself. There are no user-serviceable parts inside, and "
        "opening the case can create a risk of electric shock.",
        "If the app cannot find the {noun}, make sure your phone is on the same network and that Bluetooth is "
        "switched on.",
        "Unusual smells during the first few uses are normal and fade quickly as manufacturing residues burn off.",
        "A full list of codes and their meanings is also available in the help centre, searchable by model name.",
    ),
    "Warranty": (
        "Keep your proof of purchase, such as the till receipt or the order confirmation email, because it is "
        "required for every claim.",
        "For the first weeks after purchase your retailer handles claims; after that, contact {brand} directly and "
        "have the serial number ready.",
        "This warranty is in addition to your statutory rights as a consumer, which are not affected in any way.",
        "A repaired or replaced {noun} is covered for the remainder of the original term rather than for a fresh one.",
        "The serial number is printed on the rating label; you will need it when registering the {noun} or making "
        "a claim.",
        "Warranty service is provided in the country of purchase; cross-border claims may take longer and need "
        "extra paperwork.",
        "Before sending the {noun} in, back up any personal settings, because repairs may restore the factory "
        "configuration.",
        "Shipping costs for claims are covered by {brand} when the fault is confirmed to fall within the terms.",
    ),
    "Technical Specifications": (
        "All figures are measured under laboratory conditions and may differ slightly in everyday use depending on "
        "settings and environment.",
        "The {name} complies with the applicable European directives on electrical safety, electromagnetic "
        "compatibility, and the restriction of hazardous substances.",
        "Specifications are subject to change as the product is improved; the rating label on your unit is "
        "authoritative if it differs from this manual.",
        "The outer housing is made of recycled polymer, and the packaging is recyclable cardboard with no plastic "
        "fillers.",
        "Wireless connectivity uses 2.4 GHz Wi-Fi and Bluetooth Low Energy; networks on 5 GHz are not supported "
        "during setup.",
        "Dimensions are given without packaging, measured at the widest points, and rounded to the nearest millimetre.",
        "The rating label is on the underside of the {noun} and also shows the serial number and the date of "
        "manufacture.",
        "Noise levels are measured at a distance of one metre in a quiet room, following the relevant international "
        "standard.",
    ),
}

COMMON = (
    "Throughout this manual, the {name} is referred to simply as the {noun}.",
    "If anything here is unclear, the {brand} help centre has short videos that walk through each step.",
    "Illustrations are for guidance only, and your model may differ slightly in colour or finish.",
    "Where this manual and the quick-start leaflet disagree, follow this manual.",
)

INTRO = (
    "Thank you for choosing the {name}. This manual explains how to set up, use and look after your {noun}.",
    "This manual covers the {name} {noun}. Please read it before first use and keep it for future reference.",
)


def _product(key, name, noun, brand, app, part, kg, watts):
    return {
        "key": key,
        "name": name,
        "noun": noun,
        "brand": brand,
        "app": app,
        "part": part,
        "kg": kg,
        "watts": watts,
        "item": f"{name} {noun}",
        "ref": f"the {name} {noun}",
        "title": f"{name} {noun.title()} User Manual",
        "filename": f"{key}-manual.md",
    }


ENTITIES = (
    _product(
        "lumen-k2-kettle", "Lumen K2", "kettle", "Lumen", "Lumen Home", "limescale filter", "0.9-1.4", "2200-3000"
    ),
    _product("brisa-r7-vacuum", "Brisa R7", "robot vacuum", "Brisa", "Brisa Clean", "side brush", "2.8-3.9", "35-65"),
    _product("vela-city-ebike", "Vela City", "e-bike", "Vela", "Vela Ride", "brake pads", "19-26", "250-350"),
    _product(
        "thermia-s3-thermostat",
        "Thermia S3",
        "smart thermostat",
        "Thermia",
        "Thermia Connect",
        "backup battery",
        "0.1-0.3",
        "1-4",
    ),
    _product(
        "crema-duo-espresso",
        "Crema Duo",
        "espresso machine",
        "Crema",
        "Crema Barista",
        "water softener cartridge",
        "6-9",
        "1350-1700",
    ),
    _product(
        "aerion-scout-drone", "Aerion Scout", "camera drone", "Aerion", "Aerion Fly", "propellers", "0.2-0.9", "30-60"
    ),
    _product("purra-400-purifier", "Purra 400", "air purifier", "Purra", "Purra Air", "HEPA filter", "4-7", "20-55"),
    _product(
        "ergon-lift-desk",
        "Ergon Lift",
        "standing desk",
        "Ergon",
        "Ergon Desk",
        "column glide strips",
        "28-40",
        "150-300",
    ),
    _product("polar-cube-fridge", "Polar Cube", "mini fridge", "Polar", "Polar Cool", "door seal", "12-18", "45-85"),
)

OPENERS = (
    ("I just bought {ref} and I'm going through the manual.", "Nice. What would you like to know about it?"),
    ("{Ref} arrived today and I'm setting it up.", "Great, I can help with that. What do you need?"),
    ("I'm reading the manual for {ref}.", "Sure. Which part are you looking at?"),
)

FAMILY = Family(
    name="products",
    title="{title}",
    sections=SECTIONS,
    facts=FACTS,
    fillers=FILLERS,
    common=COMMON,
    intro=INTRO,
    entities=ENTITIES,
    openers=OPENERS,
    pair="I have {a} and {b} at home.",
)
