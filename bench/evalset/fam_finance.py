"""Terms and conditions for fictional current accounts.

Bank terms are long, formulaic and nearly identical between products; the fee, rate and limit tables are
what customers actually look up, so they carry the facts.
"""

from __future__ import annotations

from .schema import Family, fact


def _monthly(r, e):
    return {"fee": r.choice(["3", "5", "8", "12", "15"]), "dep": f"{r.choice([500, 800, 1000, 1500, 2000]):,}"}


def _fx(r, e):
    return {"pct": r.choice(["0", "1.5", "2.75", "2.99"])}


def _atm(r, e):
    return {"atm": r.choice(["1.50", "2", "3", "5"]), "free": r.choice(["two", "three", "five"])}


def _aer(r, e):
    return {"aer": r.choice(["1.25", "2.10", "3.00", "3.50", "4.15"])}


def _paid(r, e):
    return {"day": r.choice(["first business day", "1st", "15th", "last business day"])}


def _tier(r, e):
    return {"cap": f"{r.choice([1000, 2500, 5000, 10000]):,}", "low": r.choice(["0.10", "0.25", "0.50"])}


def _limit(r, e):
    return {"lim": f"{r.choice([5000, 10000, 25000, 50000]):,}"}


def _cutoff(r, e):
    return {"time": r.choice(["15:30", "16:00", "17:00", "18:00"])}


def _intl(r, e):
    return {"fee": r.choice(["5", "10", "15", "25"]), "m": r.choice(["0.5", "1", "2"])}


def _ear(r, e):
    return {"ear": r.choice(["19.9", "29.9", "35.0", "39.49"])}


def _buffer(r, e):
    return {"buf": str(r.choice([50, 100, 250, 500]))}


def _apply(r, e):
    return {"max": f"{r.choice([500, 1000, 2000, 3000, 5000]):,}", "m": str(r.choice([2, 5, 10, 15]))}


def _unauth(r, e):
    return {"m": r.choice(["6", "13", "18"])}


def _resolve(r, e):
    return {"d": str(r.choice([3, 5, 10, 15]))}


def _ombudsman(r, e):
    return {"ombudsman": r.choice(["Financial Ombudsman Service", "Banking Ombudsman", "Financial Services Arbiter"])}


def _closenotice(r, e):
    return {"d": str(r.choice([7, 14, 30]))}


def _closefee(r, e):
    closure = r.choice(
        [
            "no charge",
            f"a {e['cur']}10 charge if the account is closed within twelve months of opening",
            f"a {e['cur']}25 administration charge",
            "no charge unless a card replacement is outstanding",
        ]
    )
    return {"closure": closure}


def _remaining(r, e):
    return {"d": str(r.choice([2, 3, 5, 10]))}


def _otp(r, e):
    return {"s": str(r.choice([30, 60, 90, 120, 300]))}


def _lost(r, e):
    return {"phone": f"0345 {r.randint(100, 999)} {r.randint(1000, 9999)}"}


def _freeze(r, e):
    return {"menu": r.choice(["Card settings", "Manage card", "Security and privacy", "Cards > Controls"])}


FACTS = (
    fact(
        "fees-monthly",
        "Fees and Charges",
        _monthly,
        says=[
            "The account fee is {cur}{fee} a month, waived in any month in which at least {cur}{dep} is paid in.",
            "A monthly account fee of {cur}{fee} applies unless at least {cur}{dep} is paid in during that month.",
        ],
        lex=["What is the monthly account fee on the {name}, and when is it waived?"],
        para=["Is there a recurring price for keeping the {name}, and how do I avoid it?"],
        topic="the monthly fee",
        answer="{cur}{fee}",
    ),
    fact(
        "fees-fx",
        "Fees and Charges",
        _fx,
        says=[
            "Card payments in a foreign currency carry a foreign transaction fee of {pct}%.",
            "A foreign transaction fee of {pct}% is added to card payments in a foreign currency.",
        ],
        lex=["What is the foreign transaction fee on card payments with the {name}?"],
        para=["How much extra does it cost to buy things overseas with the {name}?"],
        topic="the foreign transaction fee",
        answer="{pct}%",
    ),
    fact(
        "fees-atm",
        "Fees and Charges",
        _atm,
        says=[
            "Cash withdrawals abroad cost {cur}{atm} each after the first {free} free withdrawals in a month.",
            "The first {free} cash withdrawals abroad each month are free, and after that each one costs {cur}{atm}.",
        ],
        lex=["How much do cash withdrawals abroad cost with the {name}?"],
        para=["What's the charge for taking money out of a machine overseas with the {name}?"],
        topic="charges for cash machines abroad",
        answer="{cur}{atm}",
    ),
    fact(
        "interest-rate",
        "Interest",
        _aer,
        says=[
            "Credit balances earn {aer}% AER (variable).",
            "The account pays {aer}% AER, variable, on credit balances.",
        ],
        lex=["What AER do credit balances earn on the {name}?"],
        para=["What's the savings return on money held in the {name}?"],
        topic="the interest rate",
        answer="{aer}%",
    ),
    fact(
        "interest-paid",
        "Interest",
        _paid,
        says=[
            "Interest is calculated daily and paid on the {day} of each month.",
            "We calculate interest daily and pay it into the account on the {day} of each month.",
        ],
        lex=[
            "On which day of each month is interest paid on the {name}?",
            "When is interest calculated and paid into the {name}?",
        ],
        para=["When does the {name} credit my earnings?"],
        topic="when interest is paid",
        answer="{day}",
    ),
    fact(
        "interest-tier",
        "Interest",
        _tier,
        says=[
            "The headline rate applies to balances up to {cur}{cap}; anything above that earns {low}% AER.",
            "Balances above {cur}{cap} earn only {low}% AER, while the headline rate applies up to that amount.",
        ],
        lex=["Up to what balance does the headline rate apply on the {name}?"],
        para=["Is there a ceiling on how much money gets the top return in the {name}?"],
        topic="the balance tier for interest",
        answer="{cur}{cap}",
    ),
    fact(
        "pay-limit",
        "Payments and Transfers",
        _limit,
        says=[
            "You can send up to {cur}{lim} a day by Faster Payments in the app.",
            "The daily limit for Faster Payments sent in the app is {cur}{lim}.",
        ],
        lex=["What is the daily limit for Faster Payments in the app with the {name}?"],
        para=["What's the most I can move out of the {name} in one go on a single day?"],
        topic="the daily sending limit",
        answer="{cur}{lim}",
    ),
    fact(
        "pay-cutoff",
        "Payments and Transfers",
        _cutoff,
        says=[
            "The cut-off for same-day payments is {time} on a working day; later payments arrive the next working day.",
            "Payments made before the {time} cut-off on a working day arrive the same day.",
        ],
        lex=["What is the cut-off time for same-day payments on the {name}?"],
        para=["By what hour must I send money from the {name} for it to land today?"],
        topic="the same-day cut-off",
        answer="{time}",
    ),
    fact(
        "pay-intl",
        "Payments and Transfers",
        _intl,
        says=[
            "International transfers cost {cur}{fee} each, plus an exchange rate margin of {m}%.",
            "Each international transfer costs {cur}{fee}, and an exchange rate margin of {m}% is applied.",
        ],
        lex=["How much do international transfers cost from the {name}?"],
        para=["What does wiring funds to another country from the {name} set me back?"],
        topic="international transfer costs",
        answer="{cur}{fee}",
    ),
    fact(
        "od-rate",
        "Overdrafts",
        _ear,
        says=[
            "The arranged overdraft rate is {ear}% EAR (variable).",
            "Arranged overdrafts are charged at {ear}% EAR, which is variable.",
        ],
        lex=["What is the arranged overdraft rate on the {name}?"],
        para=["What does it cost to borrow by going below zero on the {name}?"],
        topic="the overdraft rate",
        answer="{ear}%",
        xref=(
            "Fees and Charges",
            [
                "Overdraft interest is not a fee and is explained separately under Overdrafts.",
            ],
        ),
    ),
    fact(
        "od-buffer",
        "Overdrafts",
        _buffer,
        says=[
            "The first {cur}{buf} of any arranged overdraft is interest-free.",
            "No interest is charged on the first {cur}{buf} of an arranged overdraft.",
        ],
        lex=["How much of the arranged overdraft is interest-free on the {name}?"],
        para=["How far can I dip into the red on the {name} at no cost?"],
        topic="the interest-free buffer",
        answer="{cur}{buf}",
    ),
    fact(
        "od-apply",
        "Overdrafts",
        _apply,
        says=[
            "You can apply for an arranged overdraft of up to {cur}{max} in the app and get a decision within {m} "
            "minutes.",
            "Applications for an arranged overdraft of up to {cur}{max} are made in the app, with a decision "
            "within {m} minutes.",
        ],
        lex=["How large an arranged overdraft can I apply for in the app with the {name}?"],
        para=["What's the biggest credit line I can request against the {name}?"],
        topic="the maximum overdraft",
        answer="{cur}{max}",
    ),
    fact(
        "disp-unauth",
        "Disputes and Complaints",
        _unauth,
        says=[
            "Tell us about any unauthorised payment within {m} months of the date it was taken to be eligible for a "
            "refund.",
            "To be eligible for a refund, unauthorised payments must be reported within {m} months.",
        ],
        lex=["Within how many months must unauthorised payments on the {name} be reported for a refund?"],
        para=["How long do I have to flag a transaction I didn't make on the {name}?"],
        topic="reporting unauthorised payments",
        answer="{m} months",
        xref=(
            "Security",
            [
                "If you spot a payment you did not make, tell us straight away; refund rules are in Disputes and "
                "Complaints.",
            ],
        ),
    ),
    fact(
        "disp-resolve",
        "Disputes and Complaints",
        _resolve,
        says=[
            "We aim to resolve complaints within {d} business days, and a final response is always sent within "
            "eight weeks.",
            "Most complaints are resolved within {d} business days; a final response always follows within eight "
            "weeks.",
        ],
        lex=["Within how many business days are complaints about the {name} resolved?"],
        para=["How fast will the bank deal with my grievance about the {name}?"],
        topic="how quickly complaints are handled",
        answer="{d} business days",
    ),
    fact(
        "disp-ombudsman",
        "Disputes and Complaints",
        _ombudsman,
        says=[
            "If you are unhappy with our final response, you can refer your complaint to the {ombudsman} within six "
            "months.",
            "Complaints can be referred to the {ombudsman} within six months of our final response if you are "
            "unhappy with it.",
        ],
        lex=["Who can I refer a complaint about the {name} to if I'm unhappy with the final response?"],
        para=["Is there an independent body I can escalate to about the {name}?"],
        topic="the ombudsman",
        answer="{ombudsman}",
    ),
    fact(
        "close-notice",
        "Closing Your Account",
        _closenotice,
        says=[
            "You can close the account at any time by giving us {d} days' notice.",
            "To close the account, give us {d} days' notice; you can do so at any time.",
        ],
        lex=["How much notice do I need to give to close the {name}?"],
        para=["How far ahead must I tell the bank I'm leaving the {name}?"],
        topic="the notice period for closing",
        answer="{d} days",
    ),
    fact(
        "close-fee",
        "Closing Your Account",
        _closefee,
        says=["There is {closure} to close the account.", "Closing the account involves {closure}."],
        lex=["Is there a charge to close the {name}?"],
        para=["Will I pay anything if I shut down the {name}?"],
        topic="the closure charge",
        answer="{closure}",
    ),
    fact(
        "close-balance",
        "Closing Your Account",
        _remaining,
        says=[
            "Any remaining balance is transferred to your nominated account within {d} working days.",
            "We transfer any remaining balance to your nominated account within {d} working days.",
        ],
        lex=["How quickly is the remaining balance transferred to my nominated account when closing the {name}?"],
        para=["When will I get my leftover money after shutting the {name}?"],
        topic="how the remaining balance is paid out",
        answer="{d} working days",
    ),
    fact(
        "sec-otp",
        "Security",
        _otp,
        says=[
            "One-time passcodes expire after {s} seconds, and we never ask for them by phone.",
            "Each one-time passcode expires after {s} seconds; we will never ask you for one by phone.",
        ],
        lex=["After how many seconds do one-time passcodes expire on the {name}?"],
        para=["How quickly does the verification code for the {name} stop working?"],
        topic="one-time passcode expiry",
        answer="{s} seconds",
    ),
    fact(
        "sec-lost",
        "Security",
        _lost,
        says=[
            "Report a lost or stolen card on {phone}, which is available 24 hours a day.",
            "Lost or stolen cards should be reported on {phone}, 24 hours a day.",
        ],
        lex=["What number do I call to report a lost or stolen card for the {name}?"],
        para=["What do I dial if my wallet is pinched and my {name} plastic is gone?"],
        topic="reporting a lost card",
        answer="{phone}",
        xref=(
            "Disputes and Complaints",
            [
                "Payments taken after a card was reported lost are treated as unauthorised.",
            ],
        ),
    ),
    fact(
        "sec-freeze",
        "Security",
        _freeze,
        says=[
            "You can freeze and unfreeze your card instantly in the app under {menu}.",
            "Your card can be frozen and unfrozen instantly in the app, under {menu}.",
        ],
        lex=["How do I freeze my card in the app for the {name}?"],
        para=["Can I temporarily block spending on the {name} from my phone?"],
        topic="freezing the card",
        answer="{menu}",
    ),
)

SECTIONS = (
    "Fees and Charges",
    "Interest",
    "Payments and Transfers",
    "Overdrafts",
    "Disputes and Complaints",
    "Closing Your Account",
    "Security",
)

FILLERS = {
    "Fees and Charges": (
        "Our full tariff is available in the app and in branch, and we will give you at least two months' notice "
        "before any fee goes up.",
        "Fees are taken from the account on the second business day of the following month and itemised on your "
        "statement.",
        "Paper statements are free once a month; additional copies can be ordered for a small charge.",
        "Using your card in the United Kingdom and in shops that charge in pounds never incurs a transaction fee.",
        "If a fee has been charged in error, we will refund it together with any interest you have lost.",
        "Charges for optional services, such as urgent card delivery, are shown in the app before you confirm.",
        "If you receive certain means-tested benefits, some charges may be waived; ask us for details.",
        "We do not charge for everyday banking in the app, including setting up payees and viewing statements.",
    ),
    "Interest": (
        "Interest rates can change, and we will tell you at least two months before any reduction takes effect.",
        "Interest is paid without tax deducted; you are responsible for reporting it if it exceeds your personal "
        "savings allowance.",
        "Rate history for the last five years is published on our website so you can see how it has moved.",
        "Interest is not paid on money that is held in a savings pot linked to the account.",
        "If the account goes overdrawn on a given day, no credit interest is earned for that day.",
        "Interest is worked out on the cleared balance at the end of each day.",
        "You can see the interest earned so far this month on the account summary screen.",
        "If we increase the rate, the change may take effect immediately and we will tell you afterwards.",
    ),
    "Payments and Transfers": (
        "Check the name, sort code and account number carefully before sending money; we run a name check on "
        "every new payee.",
        "Standing orders and direct debits are listed in the app, where they can be cancelled at any time.",
        "We may pause a payment to ask you some questions if it looks unusual, to protect you from fraud.",
        "Payments between your own accounts with us are instant and do not count towards any limit.",
        "If you send money to the wrong account, tell us straight away and we will try to recover it.",
        "Future-dated payments can be set up to a year in advance and cancelled until the day before they are due.",
        "Incoming payments from abroad are credited once they have been received and converted.",
        "Some payments, such as those to new payees, may need an extra confirmation in the app.",
    ),
    "Overdrafts": (
        "An overdraft is a form of borrowing and is not suitable for long-term needs; talk to us if you find "
        "yourself relying on it.",
        "We will text you when you start using your overdraft, so it never comes as a surprise.",
        "Overdraft limits are reviewed regularly and may be reduced if your circumstances change.",
        "The cost calculator in the app shows what an overdraft of any amount would cost over a month.",
        "If you are struggling, our financial support team can agree a plan that pauses interest for a while.",
        "Your overdraft limit is shown in the app next to your balance, along with how much of it you are using.",
        "You can reduce or remove your overdraft at any time in the app without a fee.",
        "Payments that would take you over your arranged limit are normally declined rather than paid.",
    ),
    "Disputes and Complaints": (
        "We want to put things right quickly. Most problems can be sorted out in the app chat or with a single "
        "phone call.",
        "When you complain, tell us what happened, what you would like us to do, and any reference numbers.",
        "We will acknowledge your complaint promptly and give you the name of the person handling it.",
        "Keep any receipts, emails or screenshots that relate to your complaint; they help us investigate.",
        "Disputed card payments are investigated with the retailer, and a temporary credit may be given while "
        "this happens.",
        "You can complain by phone, in the app, by letter or in any branch, whichever is easiest for you.",
        "If we need more information from you, the time we take to respond is paused until we receive it.",
        "We record calls for training and quality purposes, and recordings can be used when investigating a complaint.",
    ),
    "Closing Your Account": (
        "Before closing the account, move any standing orders and direct debits so that payments are not missed.",
        "Cards and cheque books must be destroyed once the account has closed.",
        "Closing the account does not end any outstanding borrowing, which must still be repaid.",
        "A final statement is sent to you after closure, showing any last interest and charges.",
        "We may close the account ourselves with two months' notice, or immediately in limited circumstances.",
        "If you switch using the official switching service, your regular payments are moved across for you "
        "automatically.",
        "Any overdraft must be repaid before the account can be closed.",
        "Interest earned up to the closing date is added to the final balance.",
        "Joint accounts can be closed only on the instructions of all account holders, unless a court orders "
        "otherwise.",
    ),
    "Security": (
        "Keep your security details private and never share them with anyone, including people claiming to be from "
        "the bank.",
        "We will never ask you to move money to a safe account; anyone who does is a fraudster.",
        "Turn on biometric login in the app for faster and more secure access.",
        "Update the app whenever prompted, as updates often contain important security improvements.",
        "If you think someone knows your security details, change them straight away and let us know.",
        "We may ask you to confirm unusual payments in the app before they go through.",
        "Use a strong, unique password for online banking and never write it down next to your card.",
        "Check your statements regularly and tell us about anything you do not recognise.",
    ),
}

COMMON = (
    "These terms should be read together with the general terms that apply to all our personal accounts.",
    "We may change these terms by giving you at least two months' notice.",
    "Copies of these terms are available in large print and Braille on request.",
)

INTRO = (
    "These are the terms and conditions for the {name} from {bank}.",
    "This document explains how the {name} from {bank} works, including its fees, limits and your rights.",
)


def _account(key, name, bank, cur):
    return {
        "key": f"account-{key}",
        "name": name,
        "bank": bank,
        "cur": cur,
        "ref": f"the {name}",
        "title": f"{name} Terms and Conditions",
        "filename": f"account-{key}.md",
    }


ENTITIES = (
    _account("meridian-everyday", "Meridian Everyday Account", "Meridian Bank", "£"),
    _account("fairway-business", "Fairway Business Current Account", "Fairway Bank", "£"),
    _account("cobble-premier", "Cobble Premier Account", "Cobble Bank", "£"),
    _account("tern-student", "Tern Student Account", "Tern Bank", "£"),
    _account("larkspur-joint", "Larkspur Joint Account", "Larkspur Building Society", "£"),
)

OPENERS = (
    ("I've just opened {ref}.", "Congratulations. What do you want to know about it?"),
    ("I'm thinking of switching to {ref}.", "Sure, let's look at it. What matters most to you?"),
    ("My bank moved me onto {ref}.", "Okay. Anything in its terms you want to check?"),
)

FAMILY = Family(
    name="finance",
    title="{title}",
    sections=SECTIONS,
    facts=FACTS,
    fillers=FILLERS,
    common=COMMON,
    intro=INTRO,
    entities=ENTITIES,
    openers=OPENERS,
    pair="I'm choosing between {a} and {b}.",
)
