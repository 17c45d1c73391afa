"""Employee handbooks for fictional companies.

Handbooks from different employers use the same policy vocabulary (leave, notice, allowance, approval) with
different numbers, so "how much parental leave" only has one right answer once the company is known.
"""

from __future__ import annotations

from .schema import Family, fact


def _money(r, e, choices):
    return f"{e['cur']}{r.choice(choices):,}"


def _annual(r, e):
    return {"days": str(r.choice([20, 22, 25, 26, 28, 30]))}


def _carry(r, e):
    return {"n": str(r.choice([3, 5, 8, 10])), "date": r.choice(["31 March", "30 April", "30 June", "31 January"])}


def _notice(r, e):
    return {"n": str(r.choice([3, 5, 10])), "weeks": str(r.choice([2, 3, 4, 6])), "system": e["hris"]}


def _selfcert(r, e):
    return {"n": str(r.choice([3, 5, 7]))}


def _sickpay(r, e):
    return {"weeks": str(r.choice([4, 6, 8, 12, 13, 26]))}


def _report(r, e):
    return {"time": r.choice(["9:00", "9:30", "10:00", "the start of your shift"])}


def _primary(r, e):
    return {"weeks": str(r.choice([12, 16, 18, 20, 26, 52]))}


def _secondary(r, e):
    return {"weeks": str(r.choice([2, 4, 6, 8, 12])), "months": str(r.choice([6, 12, 18]))}


def _kit(r, e):
    return {"n": str(r.choice([5, 10, 20]))}


def _office(r, e):
    day = r.choice(["Tuesday", "Wednesday", "Thursday"])
    return {"n": str(r.choice([2, 3, 4])), "day": day}


def _stipend(r, e):
    return {"amt": _money(r, e, [300, 400, 500, 750, 1000])}


def _abroad(r, e):
    return {
        "n": str(r.choice([10, 20, 30, 45, 60])),
        "who": r.choice(["your director", "People Operations", "the CFO"]),
    }


def _claims(r, e):
    return {"days": str(r.choice([30, 45, 60, 90])), "tool": r.choice(["Expensify", "Pleo", "Concur", "Spendesk"])}


def _meal(r, e):
    return {"amt": _money(r, e, [35, 40, 45, 50, 60, 75])}


def _approval(r, e):
    return {
        "amt": _money(r, e, [250, 500, 750, 1000]),
        "who": r.choice(["your budget holder", "the finance team", "your director"]),
    }


def _cycle(r, e):
    freq, months = r.choice(
        [
            ("twice a year", "March and September"),
            ("once a year", "November"),
            ("twice a year", "January and July"),
            ("once a year", "June"),
        ]
    )
    return {"freq": freq, "months": months}


def _scale(r, e):
    n, low, high = r.choice(
        [
            ("four", "Not yet meeting", "Exceptional"),
            ("five", "Below expectations", "Outstanding"),
            ("three", "Developing", "Exceeding"),
        ]
    )
    return {"n": n, "low": low, "high": high}


def _raise(r, e):
    return {"date": r.choice(["1 April", "1 January", "1 July", "1 October"])}


def _learning(r, e):
    return {"amt": _money(r, e, [500, 800, 1000, 1500, 2000])}


def _study(r, e):
    return {"n": str(r.choice([2, 3, 5, 10]))}


def _clawback(r, e):
    return {"months": str(r.choice([6, 12, 18, 24])), "pct": str(r.choice([50, 75, 100]))}


FACTS = (
    fact(
        "leave-annual",
        "Annual Leave",
        _annual,
        says=[
            "Full-time employees at {name} receive {days} days of paid annual leave in each leave year, in addition "
            "to public holidays.",
            "The annual leave entitlement at {name} is {days} days of paid leave for full-time staff, on top of "
            "public holidays.",
        ],
        lex=["How many days of paid annual leave do full-time employees receive at {name}?"],
        para=["How much vacation am I entitled to at {name}?"],
        topic="the annual leave entitlement",
        answer="{days} days",
        xref=(
            "Parental Leave",
            [
                "Annual leave continues to accrue during parental leave at the normal rate set out under Annual Leave.",
            ],
        ),
    ),
    fact(
        "leave-carry",
        "Annual Leave",
        _carry,
        says=[
            "Up to {n} unused days can be carried over into the next leave year, and they must be used by {date}.",
            "You may carry over a maximum of {n} unused days, which expire if not taken by {date}.",
        ],
        lex=[
            "How many unused leave days can be carried over at {name}?",
            "What is the maximum number of unused days I may carry over at {name}?",
        ],
        para=["If I don't take all my vacation at {name}, how much rolls forward, and until when?"],
        topic="carrying over unused leave",
        answer="{n} unused days",
    ),
    fact(
        "leave-notice",
        "Annual Leave",
        _notice,
        says=[
            "Requests for more than {n} consecutive days of leave need at least {weeks} weeks' notice, submitted "
            "in {system}.",
            "Leave longer than {n} consecutive days must be requested in {system} at least {weeks} weeks in advance.",
        ],
        lex=["How much notice is needed for long leave requests at {name}?"],
        para=["How far ahead must I ask before going away on a lengthy vacation from {name}?"],
        topic="the notice needed for long leave",
        answer="{weeks} weeks",
    ),
    fact(
        "sick-selfcert",
        "Sick Leave",
        _selfcert,
        says=[
            "Employees may self-certify absences of up to {n} calendar days; beyond that, a doctor's note is required.",
            "For absences longer than {n} calendar days a doctor's note is required; shorter ones can be "
            "self-certified.",
        ],
        lex=["For how many days can I self-certify an absence at {name} before a doctor's note is required?"],
        para=["When do I need medical proof for being ill at {name}?"],
        topic="self-certification of absence",
        answer="{n} calendar days",
    ),
    fact(
        "sick-pay",
        "Sick Leave",
        _sickpay,
        says=[
            "Sick pay is paid at full salary for the first {weeks} weeks in any rolling twelve-month period.",
            "{name} pays full salary during sickness for up to {weeks} weeks in any rolling twelve-month period.",
        ],
        lex=["How many weeks of sick pay at full salary does {name} provide?"],
        para=["How long will {name} keep giving me my whole wage while I'm ill?"],
        topic="sick pay",
        answer="{weeks} weeks",
        xref=(
            "Annual Leave",
            [
                "Sick days are never deducted from your annual leave; the rules on sick pay are under Sick Leave.",
            ],
        ),
    ),
    fact(
        "sick-report",
        "Sick Leave",
        _report,
        says=[
            "Report the absence to your line manager by {time} on the first day, by phone rather than by email.",
            "On the first day of absence, phone your line manager by {time}; an email alone is not enough.",
        ],
        lex=["By what time must I report an absence to my line manager at {name}?"],
        para=["How early should I tell my boss I'm unwell and can't come in at {name}?"],
        topic="reporting an absence",
        answer="{time}",
    ),
    fact(
        "parental-primary",
        "Parental Leave",
        _primary,
        says=[
            "Primary carers receive {weeks} weeks of fully paid parental leave.",
            "{name} gives primary carers {weeks} weeks of parental leave at full pay.",
        ],
        lex=["How many weeks of fully paid parental leave do primary carers receive at {name}?"],
        para=["How long can a new mum or dad stay home without losing income at {name}?"],
        topic="paid leave for primary carers",
        answer="{weeks} weeks",
    ),
    fact(
        "parental-secondary",
        "Parental Leave",
        _secondary,
        says=[
            "Secondary carers receive {weeks} weeks, to be taken within {months} months of the birth or adoption.",
            "Secondary carers are entitled to {weeks} weeks, which must be taken within {months} months of the "
            "birth or adoption.",
        ],
        lex=["How many weeks of leave do secondary carers receive at {name}?"],
        para=["What does {name} offer the other parent after a baby arrives?"],
        topic="leave for secondary carers",
        answer="{weeks} weeks",
    ),
    fact(
        "parental-kit",
        "Parental Leave",
        _kit,
        says=[
            "Up to {n} paid keeping-in-touch days may be worked during leave without ending it.",
            "During leave you may work up to {n} paid keeping-in-touch days without bringing it to an end.",
        ],
        lex=["How many keeping-in-touch days may be worked during parental leave at {name}?"],
        para=["Can I pop into the office now and then while I'm off with a newborn at {name}?"],
        topic="keeping-in-touch days",
        answer="{n} paid keeping-in-touch days",
    ),
    fact(
        "remote-office",
        "Remote and Hybrid Work",
        _office,
        says=[
            "Hybrid staff are expected in the office {n} days a week, with {day} as the team anchor day.",
            "{day} is the anchor day, and hybrid staff are expected in the office {n} days a week in total.",
        ],
        lex=["How many office days a week are hybrid staff expected at {name}?"],
        para=["How often must I show up at the workplace in person at {name}?"],
        topic="the in-office expectation",
        answer="{n} days",
    ),
    fact(
        "remote-stipend",
        "Remote and Hybrid Work",
        _stipend,
        says=[
            "A one-off home office stipend of {amt} covers a desk, chair and monitor.",
            "New hybrid or remote staff receive a one-off home office stipend of {amt} towards a desk, chair and "
            "monitor.",
        ],
        lex=["How large is the one-off home office stipend at {name}?"],
        para=["How much money does {name} give me to set up a workspace at my house?"],
        topic="the home office stipend",
        answer="{amt}",
    ),
    fact(
        "remote-abroad",
        "Remote and Hybrid Work",
        _abroad,
        says=[
            "Working from abroad is allowed for up to {n} days per year with approval from {who}.",
            "With approval from {who}, you may work from abroad for up to {n} days a year.",
        ],
        lex=["How many days per year can I work from abroad at {name}?"],
        para=["Can I do my job from another country for a while at {name}, and for how long?"],
        topic="working from abroad",
        answer="{n} days",
    ),
    fact(
        "exp-claims",
        "Expenses and Reimbursement",
        _claims,
        says=[
            "Claims must be submitted in {tool} within {days} days of the expense being incurred.",
            "Submit every claim in {tool} no later than {days} days after the expense was incurred.",
        ],
        lex=["Within how many days must expense claims be submitted at {name}?"],
        para=["What's the deadline for getting money back for work purchases at {name}?"],
        topic="the deadline for expense claims",
        answer="{days} days",
    ),
    fact(
        "exp-meal",
        "Expenses and Reimbursement",
        _meal,
        says=[
            "The daily meal allowance on business travel is capped at {amt}, including tips.",
            "On business travel, meals are reimbursed up to {amt} a day, tips included.",
        ],
        lex=["What is the daily meal allowance on business travel at {name}?"],
        para=["How much can I spend on food when on a work trip for {name}?"],
        topic="the meal allowance",
        answer="{amt}",
        xref=(
            "Learning and Development",
            [
                "Travel and meals for approved conferences are claimed under the normal expenses policy.",
            ],
        ),
    ),
    fact(
        "exp-approval",
        "Expenses and Reimbursement",
        _approval,
        says=[
            "Any single item over {amt} requires pre-approval from {who} before purchase.",
            "Pre-approval from {who} is required for any single item costing more than {amt}.",
        ],
        lex=["Which single items require pre-approval at {name}, and from whom?"],
        para=["Do I need sign-off before buying something expensive for work at {name}?"],
        topic="the pre-approval threshold",
        answer="{amt}",
    ),
    fact(
        "perf-cycle",
        "Performance Reviews",
        _cycle,
        says=[
            "Performance reviews run {freq}, in {months}.",
            "The review cycle at {name} runs {freq}, in {months}.",
        ],
        lex=["When do performance reviews run at {name}?"],
        para=["How often does {name} formally assess employees, and at what point in the calendar?"],
        topic="the review cycle",
        answer="{months}",
    ),
    fact(
        "perf-scale",
        "Performance Reviews",
        _scale,
        says=[
            "Ratings use a {n}-point scale from '{low}' to '{high}'.",
            "Each review ends with a rating on a {n}-point scale, running from '{low}' to '{high}'.",
        ],
        lex=["What rating scale is used in performance reviews at {name}?"],
        para=["How are people scored at appraisal time at {name}?"],
        topic="the rating scale",
        answer="{n}-point scale",
    ),
    fact(
        "perf-raise",
        "Performance Reviews",
        _raise,
        says=[
            "Salary adjustments agreed in the review take effect on {date}.",
            "Any salary adjustment agreed during the review takes effect on {date}.",
        ],
        lex=["When do salary adjustments take effect at {name}?"],
        para=["When would a pay rise show up at {name}?"],
        topic="when salary adjustments take effect",
        answer="{date}",
    ),
    fact(
        "ld-budget",
        "Learning and Development",
        _learning,
        says=[
            "Each employee has an annual learning budget of {amt} for courses, books and conferences.",
            "An annual learning budget of {amt} per employee covers courses, books and conferences.",
        ],
        lex=["How much is the annual learning budget per employee at {name}?"],
        para=["How much will {name} spend on my training each year?"],
        topic="the learning budget",
        answer="{amt}",
    ),
    fact(
        "ld-study",
        "Learning and Development",
        _study,
        says=[
            "{n} study days per year are available for exam preparation and sitting exams.",
            "You can take {n} study days a year for exam preparation and for sitting the exams themselves.",
        ],
        lex=["How many study days per year are available for exam preparation at {name}?"],
        para=["How much time off can I get to revise for a certification at {name}?"],
        topic="study days",
        answer="{n} study days",
    ),
    fact(
        "ld-clawback",
        "Learning and Development",
        _clawback,
        says=[
            "If you leave within {months} months of completing a funded qualification, {pct}% of its cost must be "
            "repaid.",
            "Leaving within {months} months of finishing a funded qualification means repaying {pct}% of the cost.",
        ],
        lex=["How much of a funded qualification must be repaid if I leave {name}?"],
        para=["Do I owe {name} money back for training if I quit soon afterwards?"],
        topic="repaying training costs",
        answer="{pct}%",
    ),
)

SECTIONS = (
    "Annual Leave",
    "Sick Leave",
    "Parental Leave",
    "Remote and Hybrid Work",
    "Expenses and Reimbursement",
    "Performance Reviews",
    "Learning and Development",
)

FILLERS = {
    "Annual Leave": (
        "Leave is meant to be taken. Managers are asked to check in with anyone who has booked very little time off "
        "by the middle of the leave year.",
        "Part-time colleagues receive the same entitlement pro rata, calculated on the number of hours in their "
        "contract.",
        "Bank holidays that fall on a non-working day for part-time staff are handled pro rata as well, so nobody "
        "gains or loses by their working pattern.",
        "Team calendars show approved leave automatically, so please avoid booking the same week as everyone else in "
        "a small team without talking to them first.",
        "Unused leave is not normally paid out, except on leaving the company, when any accrued balance appears on "
        "the final payslip.",
        "Leave requests are normally approved within a few working days; if you have not heard back, remind your "
        "manager.",
        "During the busiest trading weeks, some teams ask that longer breaks are agreed well in advance.",
        "Leave taken during a notice period is agreed case by case between you and your manager.",
    ),
    "Sick Leave": (
        "Your health comes first. Please do not come in when you are unwell, and do not feel obliged to check email "
        "while off sick.",
        "Repeated short absences are discussed privately with your line manager to see whether any support or "
        "adjustment would help.",
        "Occupational health referrals are confidential, and the service only shares advice about adjustments, not "
        "medical details.",
        "Medical appointments that cannot be arranged outside working hours do not count as sickness absence.",
        "On your return, your manager will hold a short welcome-back conversation to make sure you have what you need.",
        "If you fall ill during annual leave, the affected days can be reclassified as sick leave if you let us "
        "know promptly.",
        "Mental health absences are treated in exactly the same way as any other sickness absence.",
        "Long-term absence is supported by a return-to-work plan agreed with occupational health and your manager.",
    ),
    "Parental Leave": (
        "The policy applies equally to birth, adoption and surrogacy, and to parents of any gender.",
        "Please let People Operations know as early as you feel comfortable so that cover can be arranged without "
        "pressure.",
        "Your role, salary and benefits are protected throughout the leave, and pension contributions continue as "
        "normal.",
        "A phased return, working reduced hours for the first few weeks back, can be agreed with your manager.",
        "Colleagues who experience pregnancy loss are entitled to compassionate leave on full pay, with no questions "
        "asked.",
        "Shared parental leave is available where both parents are eligible, and the entitlement can be split "
        "between them.",
        "Antenatal appointments are paid time off and do not need to be made up later.",
        "Breastfeeding facilities are available in every office, and flexible breaks can be arranged on your return.",
    ),
    "Remote and Hybrid Work": (
        "Hybrid working is a privilege extended on trust. It works best when teams agree norms for availability and "
        "response times.",
        "Your home workspace should be safe and reasonably private; a short self-assessment form is completed once a "
        "year.",
        "Core collaboration hours are 10:00 to 16:00 local time, and meetings should be scheduled within them where "
        "possible.",
        "Company equipment remains company property and must be returned when you leave or when it is replaced.",
        "Internet costs are not reimbursed separately, as they are considered part of normal household expenses.",
        "Working from a café or other public place is fine for short periods, as long as confidential calls are "
        "taken somewhere private.",
        "Please keep your calendar up to date with where you are working, so that colleagues know when to find you "
        "in person.",
        "Requests for fully remote working are considered individually, taking into account the needs of the role.",
    ),
    "Expenses and Reimbursement": (
        "Expenses should be reasonable and necessary for business; if you would hesitate to explain one to a "
        "colleague, ask first.",
        "Keep an itemised receipt for every claim. A card statement alone is not accepted as proof of purchase.",
        "Alcohol is not reimbursed except at approved client entertainment events.",
        "Reimbursements are paid with the next monthly salary run once the claim has been approved.",
        "Travel should be booked through the company travel portal wherever possible, so that duty-of-care tracking "
        "works.",
        "Mileage for business journeys in your own car is reimbursed at the rate published on the intranet.",
        "Corporate cards are available for frequent travellers and must be reconciled every month.",
        "Claims made on behalf of colleagues should list everyone who benefited, so that the right budgets are "
        "charged.",
    ),
    "Performance Reviews": (
        "Reviews are a conversation, not a verdict. Both you and your manager prepare notes in advance using the "
        "shared template.",
        "Peer feedback is gathered from three to five colleagues of your choosing, plus anyone your manager adds.",
        "Calibration sessions make sure ratings are consistent across teams before they are shared.",
        "If you disagree with an outcome, you can ask for a second conversation with your manager's manager.",
        "Objectives set during the review should be revisited at monthly one-to-ones rather than left until the next "
        "cycle.",
        "Managers receive training every year on giving fair and specific feedback.",
        "Promotions are discussed at the same time as reviews, but a promotion can also be proposed at any point in "
        "the year.",
        "Notes from each review are stored in the HR system and are visible to you and your manager.",
    ),
    "Learning and Development": (
        "Learning is part of the job. Everyone is encouraged to spend some time every week on deliberate practice or "
        "study.",
        "The internal library of recorded talks and workshops is free to use and does not come out of any budget.",
        "Conference attendance should be agreed with your manager, who will help you choose sessions relevant to "
        "your goals.",
        "Mentoring pairs are matched twice a year across departments, and taking part counts towards development "
        "objectives.",
        "After attending a course, please share a short summary with your team so that others benefit too.",
        "Team leaders can request funding for group training when several people need the same skill.",
        "Online course subscriptions bought through the company can be shared across a team.",
        "Development plans are reviewed at least twice a year alongside your objectives.",
    ),
}

COMMON = (
    "If this policy conflicts with your employment contract, the contract takes precedence.",
    "Questions about this policy can be sent to People Operations through the internal help desk.",
    "This policy is reviewed every year and may change; the version on the intranet is always the current one.",
)

INTRO = (
    "This handbook sets out the main people policies at {name}. It applies to all employees unless their contract "
    "says otherwise.",
    "Welcome to {name}. This handbook summarises the policies that matter most in your day-to-day working life.",
)


def _company(key, name, cur, hris):
    return {
        "key": f"handbook-{key}",
        "name": name,
        "cur": cur,
        "hris": hris,
        "ref": name,
        "title": f"{name} Employee Handbook",
        "filename": f"handbook-{key}.md",
    }


ENTITIES = (
    _company("northwind", "Northwind Logistics", "£", "BambooHR"),
    _company("bluefin", "Bluefin Analytics", "€", "Personio"),
    _company("cedar-stone", "Cedar & Stone Architects", "£", "HiBob"),
    _company("orbital", "Orbital Games", "$", "Workday"),
    _company("halden", "Halden Health", "€", "Factorial"),
    _company("quayside", "Quayside Retail", "£", "Personio"),
)

OPENERS = (
    (
        "I've accepted an offer from {ref} and I'm reading their employee handbook.",
        "Congratulations! What do you want to check?",
    ),
    ("I've got an interview at {ref} tomorrow.", "Good luck! Anything you want to look up about them beforehand?"),
    ("HR at {ref} sent me the handbook to read before I start.", "Handy. What would you like to know?"),
)

FAMILY = Family(
    name="hr",
    title="{title}",
    sections=SECTIONS,
    facts=FACTS,
    fillers=FILLERS,
    common=COMMON,
    intro=INTRO,
    entities=ENTITIES,
    openers=OPENERS,
    pair="I have job offers from {a} and {b}.",
)
