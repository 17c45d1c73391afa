"""Commercial agreements with capitalised defined terms.

Contracts are the hardest near-duplicates: every one defines "Business Day" and limits liability in the same
boilerplate, and a question like "how is the Determination Date defined" only makes sense per agreement. The
definitions live in one section and are used in others, which gives natural partial (grade 1) relevance.
"""

from __future__ import annotations

import random

from .schema import Family, fact

ORDINALS = {2: "second", 3: "third", 5: "fifth", 7: "seventh", 10: "tenth"}
CITIES = ["London", "Dublin", "Frankfurt", "Amsterdam", "Luxembourg", "Edinburgh"]
LAWS = [
    ("England and Wales", "the courts of England and Wales", "London"),
    ("Ireland", "arbitration under the rules of the London Court of International Arbitration", "Dublin"),
    ("the Netherlands", "the Netherlands Arbitration Institute", "Amsterdam"),
    ("Scotland", "the Court of Session", "Edinburgh"),
    ("the State of New York", "arbitration administered by the ICDR", "New York"),
]
EXCLUDED = [
    "loss of profits, loss of goodwill, or any indirect or consequential loss",
    "loss of data, loss of anticipated savings, or business interruption",
    "any special, punitive or exemplary damages",
]
UNCAPPED = [
    "death or personal injury caused by negligence, fraud, or breach of the confidentiality clause",
    "the indemnity for third-party intellectual property claims and wilful misconduct",
    "unpaid fees and liability that cannot be limited by law",
]
RECIPIENTS = [
    "employees, officers and professional advisers",
    "affiliates, auditors and insurers",
    "subcontractors and legal counsel",
]
METHODS = [
    "hand, pre-paid first-class post or recorded delivery",
    "courier or email with a confirmation copy sent by post",
    "recorded delivery or email to the addresses in the Schedule",
]


def _determination(r, e):
    n = r.choice(list(ORDINALS))
    return {"nth": ORDINALS[n], "event": e["event"]}


def _businessday(r, e):
    return {"city": r.choice(CITIES)}


def _cutoff(r, e):
    return {
        "time": r.choice(["11:00", "12:00", "14:00", "15:30", "16:00"]),
        "tz": r.choice(["London time", "CET", "Dublin time"]),
    }


def _term(r, e):
    return {"years": r.choice(["two", "three", "five", "seven"])}


def _renewal(r, e):
    return {"m": str(r.choice([12, 24])), "d": str(r.choice([60, 90, 120, 180]))}


def _cure(r, e):
    return {"d": str(r.choice([14, 20, 30, 45]))}


def _invoice(r, e):
    return {"d": str(r.choice([14, 30, 45, 60]))}


def _late(r, e):
    return {
        "pct": r.choice(["2", "3", "4", "8"]),
        "base": r.choice(["Bank of England", "European Central Bank", "SONIA"]),
    }


def _increase(r, e):
    return {
        "pct": str(r.choice([3, 4, 5, 7])),
        "index": r.choice(["the annual change in CPI", "the change in RPI", "HICP inflation"]),
    }


def _cap(r, e):
    return {"mult": str(r.choice([100, 125, 150, 200])), "m": str(r.choice([12, 24]))}


def _excluded(r, e):
    return {"excluded": r.choice(EXCLUDED)}


def _uncapped(r, e):
    return {"uncapped": r.choice(UNCAPPED)}


def _survival(r, e):
    return {"y": r.choice(["two", "three", "five", "seven"])}


def _return(r, e):
    return {
        "d": str(r.choice([10, 14, 30])),
        "copies": r.choice(["automatic backups", "archived email", "legal hold systems"]),
    }


def _recipients(r, e):
    return {"who": r.choice(RECIPIENTS)}


def _law(r, e):
    # Both the governing-law and the forum facts call this; seeding from the agreement keeps them consistent.
    law, forum, seat = random.Random(e["key"]).choice(LAWS)
    return {"law": law, "forum": forum, "seat": seat}


def _escalation(r, e):
    return {
        "d": str(r.choice([10, 15, 20, 30])),
        "level": r.choice(["chief executives", "managing directors", "general counsel"]),
    }


def _methods(r, e):
    return {"method": r.choice(METHODS)}


def _deemed(r, e):
    return {"time": r.choice(["9:00", "10:00", "12:00"])}


def _address(r, e):
    return {"addr": e["address"], "att": r.choice(["Company Secretary", "General Counsel", "Head of Legal"])}


FACTS = (
    fact(
        "def-determination",
        "Definitions",
        _determination,
        says=[
            '"Determination Date" means the {nth} Business Day before each {event}.',
            '"Determination Date" means, in relation to each {event}, the day falling {nth} Business Day before it.',
        ],
        lex=["How is the Determination Date defined in the {name}?"],
        para=["Under the {name}, how many working days in advance of each periodic instalment are the figures locked?"],
        topic="the definition of Determination Date",
        answer="{nth} Business Day",
        xref=(
            "Fees and Payment",
            [
                "Amounts payable on each {event} are calculated as at the Determination Date.",
                "All sums due on each {event} are fixed by reference to the relevant Determination Date.",
            ],
        ),
    ),
    fact(
        "def-businessday",
        "Definitions",
        _businessday,
        says=[
            '"Business Day" means a day, other than a Saturday, Sunday or public holiday, on which banks are open '
            "for general business in {city}.",
            '"Business Day" means any weekday on which commercial banks in {city} are open for general business.',
        ],
        lex=[
            "What counts as a Business Day under the {name}?",
            "In which city must banks be open for general business for a Business Day under the {name}?",
        ],
        para=["Under the {name}, what qualifies as a working date, and which city's calendar matters?"],
        topic="the definition of Business Day",
        answer="{city}",
    ),
    fact(
        "def-cutoff",
        "Definitions",
        _cutoff,
        says=[
            '"Cut-off Time" means {time} ({tz}) on any Business Day.',
            '"Cut-off Time" means {time} {tz} on a Business Day; instructions received later are treated as '
            "received on the next Business Day.",
        ],
        lex=["What is the Cut-off Time in the {name}?"],
        para=["Under the {name}, what's the daily deadline hour for submitting requests?"],
        topic="the Cut-off Time",
        answer="{time}",
    ),
    fact(
        "term-initial",
        "Term and Termination",
        _term,
        says=[
            "This Agreement commences on the Effective Date and continues for an initial term of {years} years.",
            "The initial term is {years} years from the Effective Date.",
        ],
        lex=["How long is the initial term of the {name} from the Effective Date?"],
        para=["For how many years does the {name} run at first?"],
        topic="the initial term",
        answer="{years} years",
    ),
    fact(
        "term-renewal",
        "Term and Termination",
        _renewal,
        says=[
            "Thereafter it renews automatically for successive {m}-month periods unless either party gives at least "
            "{d} days' written notice of non-renewal.",
            "After the initial term, the Agreement renews automatically for {m} months at a time unless either party "
            "serves written notice of non-renewal at least {d} days before expiry.",
        ],
        lex=["How much written notice of non-renewal is required under the {name}?"],
        para=["How far in advance must one side warn the other to stop the {name} rolling over?"],
        topic="the non-renewal notice period",
        answer="{d} days",
    ),
    fact(
        "term-cure",
        "Term and Termination",
        _cure,
        says=[
            "Either party may terminate with immediate effect if the other commits a material breach that remains "
            "unremedied {d} days after written notice of it.",
            "A material breach that is not remedied within {d} days of written notice entitles the other party to "
            "terminate with immediate effect.",
        ],
        lex=["How many days does a party have to remedy a material breach under the {name}?"],
        para=[
            "Under the {name}, how long does the side at fault get to fix a serious violation before the deal "
            "can be ended?"
        ],
        topic="the cure period for a material breach",
        answer="{d} days",
        xref=(
            "Notices",
            [
                "A notice of material breach must describe the breach in enough detail for it to be remedied.",
            ],
        ),
    ),
    fact(
        "pay-invoice",
        "Fees and Payment",
        _invoice,
        says=[
            "Invoices are payable within {d} days of receipt, in the currency stated on the invoice.",
            "The Customer shall pay each invoice within {d} days of receipt.",
        ],
        lex=["Within how many days are invoices payable under the {name}?"],
        para=["How long is there to settle a bill under the {name}?"],
        topic="the payment terms",
        answer="{d} days",
        xref=(
            "Term and Termination",
            [
                "Failure to pay undisputed invoices when due is a material breach for the purposes of this clause.",
            ],
        ),
    ),
    fact(
        "pay-late",
        "Fees and Payment",
        _late,
        says=[
            "Late amounts bear interest at {pct}% per annum above the {base} base rate, accruing daily.",
            "Interest accrues daily on late amounts at {pct}% a year above the {base} base rate.",
        ],
        lex=["What interest applies to late amounts under the {name}?"],
        para=["What penalty builds up on overdue sums under the {name}?"],
        topic="interest on late payment",
        answer="{pct}%",
    ),
    fact(
        "pay-increase",
        "Fees and Payment",
        _increase,
        says=[
            "Fees may be increased once per Contract Year by no more than {pct}% or {index}, whichever is lower.",
            "The Supplier may increase the fees once in each Contract Year by the lower of {pct}% and {index}.",
        ],
        lex=["How much can fees be increased per Contract Year under the {name}?"],
        para=["What's the ceiling on yearly price rises in the {name}?"],
        topic="the limit on fee increases",
        answer="{pct}%",
    ),
    fact(
        "liab-cap",
        "Limitation of Liability",
        _cap,
        says=[
            "Each party's aggregate liability is capped at {mult}% of the fees paid in the {m} months preceding the "
            "claim.",
            "The aggregate liability of each party shall not exceed {mult}% of the fees paid in the {m} months "
            "before the claim arose.",
        ],
        lex=["What is the aggregate liability cap under the {name}?"],
        para=["What is the most either side could have to pay out in damages under the {name}?"],
        topic="the liability cap",
        answer="{mult}%",
    ),
    fact(
        "liab-excluded",
        "Limitation of Liability",
        _excluded,
        says=["Neither party is liable for {excluded}.", "In no event shall either party be liable for {excluded}."],
        lex=["Which losses is neither party liable for under the {name}?"],
        para=["What kinds of harm can't be claimed for under the {name}?"],
        topic="the excluded losses",
        answer="{excluded}",
    ),
    fact(
        "liab-uncapped",
        "Limitation of Liability",
        _uncapped,
        says=["The cap does not apply to {uncapped}.", "Nothing in this clause limits liability for {uncapped}."],
        lex=[
            "What does the liability cap not apply to under the {name}?",
            "What does the clause not limit liability for under the {name}?",
        ],
        para=["Which obligations in the {name} have unlimited exposure?"],
        topic="what is outside the cap",
        answer="{uncapped}",
        xref=(
            "Confidentiality",
            [
                "Liability for breach of this clause is subject to the rules in Limitation of Liability.",
                "The Limitation of Liability clause governs how far breaches of this clause can be claimed.",
            ],
        ),
    ),
    fact(
        "conf-survival",
        "Confidentiality",
        _survival,
        says=[
            "Confidentiality obligations survive termination for {y} years.",
            "The obligations in this clause survive termination or expiry of this Agreement for {y} years.",
        ],
        lex=["How long do confidentiality obligations survive termination of the {name}?"],
        para=["After the {name} ends, for how long must secrets still be kept?"],
        topic="how long confidentiality lasts",
        answer="{y} years",
    ),
    fact(
        "conf-return",
        "Confidentiality",
        _return,
        says=[
            "On request, Confidential Information must be returned or destroyed within {d} days, save for copies "
            "held in {copies}.",
            "Within {d} days of a request, the recipient shall return or destroy all Confidential Information, "
            "except copies held in {copies}.",
        ],
        lex=["Within how many days must Confidential Information be returned or destroyed under the {name}?"],
        para=["Under the {name}, how quickly do sensitive materials have to be handed back or wiped when asked?"],
        topic="returning confidential material",
        answer="{d} days",
    ),
    fact(
        "conf-recipients",
        "Confidentiality",
        _recipients,
        says=[
            "Disclosure is permitted to {who} who need to know and are bound by duties of confidence no less "
            "protective.",
            "A party may disclose Confidential Information to its {who} on a need-to-know basis.",
        ],
        lex=[
            "To whom may Confidential Information be disclosed under the {name}?",
            "To whom is disclosure permitted under the {name}?",
        ],
        para=["Who else is allowed to see the sensitive material shared under the {name}?"],
        topic="permitted recipients",
        answer="{who}",
    ),
    fact(
        "law-governing",
        "Governing Law and Disputes",
        _law,
        says=[
            "This Agreement and any non-contractual obligations arising from it are governed by the laws of {law}.",
            "The laws of {law} govern this Agreement.",
        ],
        lex=["Which laws govern the {name}?"],
        para=["Which country's legal system applies to the {name}?"],
        topic="the governing law",
        answer="{law}",
    ),
    fact(
        "law-forum",
        "Governing Law and Disputes",
        _law,
        says=[
            "Any dispute is referred to {forum}, seated in {seat}, whose decision is final.",
            "Disputes shall be finally resolved by {forum}, with the seat in {seat}.",
        ],
        lex=[
            "Where are disputes referred under the {name}?",
            "Where is the seat for resolving disputes under the {name}?",
        ],
        para=["If the parties to the {name} fall out, who decides and where?"],
        topic="the dispute forum",
        answer="{seat}",
    ),
    fact(
        "law-escalation",
        "Governing Law and Disputes",
        _escalation,
        says=[
            "Before starting proceedings, the parties must escalate the dispute to their {level}, who have {d} days "
            "to resolve it.",
            "No proceedings may begin until the dispute has been escalated to the parties' {level} and {d} days "
            "have passed without resolution.",
        ],
        lex=["To whom must a dispute be escalated before proceedings under the {name}, and for how many days?"],
        para=["Under the {name}, what must happen before anyone can sue?"],
        topic="the escalation step before proceedings",
        answer="{d} days",
    ),
    fact(
        "notice-method",
        "Notices",
        _methods,
        says=[
            "Notices must be in writing and delivered by {method}.",
            "Any notice under this Agreement shall be in writing and delivered by {method}.",
        ],
        lex=["How must notices be delivered under the {name}?"],
        para=["What are the accepted ways to formally inform the other side under the {name}?"],
        topic="how notices are delivered",
        answer="{method}",
    ),
    fact(
        "notice-deemed",
        "Notices",
        _deemed,
        says=[
            "A notice sent by email is deemed received at {time} on the next Business Day after transmission.",
            "Email notices are deemed received at {time} on the Business Day following transmission.",
        ],
        lex=["When is a notice sent by email deemed received under the {name}?"],
        para=["Under the {name}, at what moment does an electronic message count as having arrived?"],
        topic="when an email notice is deemed received",
        answer="{time}",
        xref=(
            "Definitions",
            [
                "Business Day is used throughout, including for the timing of notices.",
                "The timing rules in the Notices clause rely on the Business Day definition.",
            ],
        ),
    ),
    fact(
        "notice-address",
        "Notices",
        _address,
        says=[
            "Notices to {party} go to {addr}, marked for the attention of the {att}.",
            "Notices for {party} shall be sent to {addr} and marked for the attention of the {att}.",
        ],
        lex=[
            "Where are notices to {party} sent under the {name}?",
            "Where do notices to {party} go under the {name}, and for whose attention are they marked?",
        ],
        para=["What is the mailing destination for formal letters to {party} under the {name}?"],
        topic="the notice address",
        answer="{addr}",
    ),
)

SECTIONS = (
    "Definitions",
    "Term and Termination",
    "Fees and Payment",
    "Limitation of Liability",
    "Confidentiality",
    "Governing Law and Disputes",
    "Notices",
)

FILLERS = {
    "Definitions": (
        "In this Agreement, unless the context otherwise requires, the capitalised terms below have the meanings "
        "given to them, and the singular includes the plural.",
        '"Effective Date" means the date on which this Agreement has been signed by both parties, as shown on the '
        "signature page.",
        "References to a statute include that statute as amended or re-enacted from time to time, together with any "
        "subordinate legislation made under it.",
        '"Contract Year" means each period of twelve months beginning on the Effective Date or on an anniversary of '
        "it.",
        "Headings are for convenience only and do not affect the interpretation of this Agreement.",
        '"Affiliate" means, in relation to a party, any entity that controls, is controlled by, or is under '
        "common control with that party.",
        '"Confidential Information" means all information of a confidential nature disclosed by one party to the '
        "other, in any form.",
        "Words following the terms including or in particular are illustrative and do not limit the sense of the "
        "preceding words.",
    ),
    "Term and Termination": (
        "Termination does not affect any rights, remedies or obligations that accrued before the date of termination.",
        "On termination, each party shall promptly return any property of the other party in its possession.",
        "Either party may terminate this Agreement immediately if the other becomes insolvent or enters into any "
        "arrangement with its creditors.",
        "Clauses which by their nature are intended to survive termination shall continue in full force and effect.",
        "Neither party shall be entitled to compensation solely because this Agreement ends in accordance with its "
        "terms.",
        "Any notice of termination must state the clause relied on and the date on which termination is to take "
        "effect.",
        "Termination of this Agreement does not end any order accepted before the termination date, unless the "
        "parties agree otherwise.",
        "On expiry or termination, each party shall provide reasonable assistance for an orderly transition of the "
        "services.",
    ),
    "Fees and Payment": (
        "All sums are stated exclusive of value added tax, which shall be added where applicable at the prevailing "
        "rate.",
        "Payment shall be made by bank transfer to the account notified in writing, without set-off or deduction.",
        "If a party disputes an invoice in good faith, it shall pay the undisputed portion and notify the other party "
        "of the dispute promptly.",
        "Each party bears its own costs in connection with the negotiation and execution of this Agreement.",
        "Fees for additional services are agreed in writing before the services are performed.",
        "Each invoice shall reference the relevant purchase order number and include enough detail to allow "
        "verification.",
        "The Customer may request supporting records for any charge, which shall be provided within a reasonable time.",
        "Expenses are only payable where they have been approved in writing in advance.",
    ),
    "Limitation of Liability": (
        "Each party acknowledges that the allocation of risk in this clause is reflected in the fees and is "
        "reasonable in the circumstances.",
        "Each party shall take reasonable steps to mitigate any loss for which it seeks to hold the other liable.",
        "No claim may be brought more than two years after the claimant became aware of the circumstances giving "
        "rise to it.",
        "The parties have each taken independent legal advice on the effect of this clause.",
        "This clause prevails over any other provision of this Agreement to the extent of any inconsistency.",
        "References to liability include liability in contract, tort (including negligence), breach of statutory "
        "duty or otherwise.",
        "Each party's liability is reduced to the extent that the loss was caused by the other party's acts or "
        "omissions.",
        "The parties agree that the remedies in this Agreement are exclusive except where expressly stated otherwise.",
    ),
    "Confidentiality": (
        "Each party shall keep the other's Confidential Information secret and use it only to perform its "
        "obligations under this Agreement.",
        "Confidential Information does not include information that is or becomes public other than through a "
        "breach of this clause.",
        "A party may disclose Confidential Information where required by law or a regulator, giving the other party "
        "as much notice as is lawful.",
        "Damages alone may not be an adequate remedy for breach of this clause, and injunctive relief may be sought.",
        "Neither party shall announce this Agreement publicly without the prior written consent of the other.",
        "Each party shall ensure that anyone to whom it passes Confidential Information complies with this clause.",
        "Confidential Information remains the property of the disclosing party at all times.",
        "Neither party shall reverse engineer or decompile any materials received from the other under this Agreement.",
    ),
    "Governing Law and Disputes": (
        "The parties shall attempt in good faith to resolve any dispute promptly through negotiation between the "
        "contract managers.",
        "Nothing in this clause prevents either party from seeking urgent interim relief from a court of competent "
        "jurisdiction.",
        "The language of any proceedings shall be English, and documents in other languages shall be translated at "
        "the submitting party's cost.",
        "Each party irrevocably waives any objection to the venue chosen in this clause.",
        "Performance of this Agreement shall continue while a dispute is being resolved, unless it is terminated.",
        "Each party shall bear its own costs of any dispute resolution procedure unless the tribunal decides "
        "otherwise.",
        "Any award or judgment may be enforced in any jurisdiction where the relevant party has assets.",
        "The parties shall keep the existence and content of any dispute confidential, except as required by law.",
    ),
    "Notices": (
        "A party may change its address for notices by giving notice to the other party in accordance with this "
        "clause.",
        "Notices delivered by hand are deemed received at the time of delivery, if delivered during business hours.",
        "This clause does not apply to the service of any proceedings or other documents in any legal action.",
        "Operational communications, such as support requests, are not notices and may be sent through the agreed "
        "channels.",
        "A notice sent by pre-paid post is deemed received on the second Business Day after posting.",
        "Notices must be signed by an authorised representative of the party giving them.",
        "A copy of any notice concerning termination or breach shall also be sent to the recipient's legal department.",
        "Notices given in any language other than English shall be accompanied by a certified translation.",
    ),
}

COMMON = (
    "This clause shall be read together with the other provisions of this Agreement.",
    "No variation of this clause is effective unless it is in writing and signed by both parties.",
    "Any failure to enforce this clause is not a waiver of the right to enforce it later.",
)

INTRO = (
    "This {name} is made between {party} and {counterparty}.",
    "{Name} between {party} and {counterparty}, setting out the terms on which the parties will do business.",
)


def _agreement(key, name, party, counterparty, event, address):
    return {
        "key": f"agreement-{key}",
        "name": name,
        "Name": name,
        "party": party,
        "counterparty": counterparty,
        "event": event,
        "address": address,
        "ref": f"the {name}",
        "title": name,
        "filename": f"agreement-{key}.md",
    }


ENTITIES = (
    _agreement(
        "harbourview-msa",
        "Harbourview Master Services Agreement",
        "Harbourview Systems Ltd",
        "Kestrel Foods plc",
        "Payment Date",
        "14 Quay Street, Bristol BS1 4DB",
    ),
    _agreement(
        "aldgate-rcf",
        "Aldgate Revolving Credit Facility Agreement",
        "Aldgate Bank plc",
        "Marlow Freight Ltd",
        "Interest Payment Date",
        "1 Aldgate Square, London EC3N 1AD",
    ),
    _agreement(
        "northgate-licence",
        "Northgate Software Licence Agreement",
        "Northgate Software BV",
        "Fenwick Retail Group",
        "Quarter Date",
        "Keizersgracht 210, 1016 DZ Amsterdam",
    ),
    _agreement(
        "pinecrest-lease",
        "Pinecrest Commercial Lease",
        "Pinecrest Estates Ltd",
        "Orbital Games Ltd",
        "Rent Payment Date",
        "Pinecrest House, 8 Mill Lane, Leeds LS1 5AP",
    ),
    _agreement(
        "solent-dpa",
        "Solent Data Processing Agreement",
        "Solent Cloud Ltd",
        "Halden Health GmbH",
        "Billing Date",
        "Ocean Village, 3 Canute Road, Southampton SO14 3FJ",
    ),
    _agreement(
        "tamar-distribution",
        "Tamar Distribution Agreement",
        "Tamar Beverages Ltd",
        "Quayside Retail plc",
        "Settlement Date",
        "Tamar Wharf, Plymouth PL1 3RP",
    ),
)

OPENERS = (
    ("I'm reviewing {ref} for a client.", "Sure. Which clauses do you want to go through?"),
    ("Legal sent me {ref} to sign off.", "Okay. What would you like to check before signing?"),
    ("Can you help me read {ref}?", "Of course. What are you looking for in it?"),
)

FAMILY = Family(
    name="legal",
    title="{title}",
    sections=SECTIONS,
    facts=FACTS,
    fillers=FILLERS,
    common=COMMON,
    intro=INTRO,
    entities=ENTITIES,
    openers=OPENERS,
    pair="I'm comparing {a} with {b}.",
)
