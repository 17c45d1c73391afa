"""The facts a clause of the user's own words states about them, one finder per kind of fact.

Every finder reads one clause (a sentence is cut into clauses where a new subject starts: "I'm vegan and my
son is 6" is two) and yields every fact it finds there, so that two facts in one clause are two memories. A
finder only speaks for the user: its patterns need a first-person subject ("I'm", "I have", "my"), or none
at all at the start of a clause ("allergic to penicillin btw"); "my colleague is allergic to nuts" has
neither. Family members are the exception: "my son Oliver is allergic to eggs" is kept as Oliver's.

What a finder does not judge (questions, hypotheticals, reported speech, jokes) is filtered out before it
runs, by ``foundation.ai.memories``.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from foundation.ai import memory_words as words
from foundation.ai.memory_text import about_user, sentence, slug, third_person

ANY_CASE = re.IGNORECASE


@dataclass(frozen=True)
class Clause:
    text: str
    first_person: bool = False  # it starts with ANY_CASE, we, my or our
    listed: bool = False  # an item of an "about me: 29, tester, vegetarian" list
    # What a "them" or "it" in it refers to ("I love dogs but I'm allergic to them"), or what a bare "I'm
    # allergic" is to ("I can't take ibuprofen, I'm allergic").
    antecedent: str = ""


@dataclass(frozen=True)
class Fact:
    category: str
    key: str
    content: str
    weak: bool = False  # kept only when nothing else was found in its clause (habits, notes)


Finder = Callable[[Clause], Iterator[Fact]]

# --- shared pieces of pattern ----------------------------------------------------------------------------
NAME = r"(?-i:[A-Z][a-z]+(?:-[A-Z][a-z]+)?)"
NAMES = rf"{NAME}(?:(?:\s*,\s*|\s+and\s+|\s*&\s*){NAME})*"
PLACE = (
    r"(?:(?:a|an|the)\s+(?:[a-z]+\s+){0,2}(?:in|near|outside|of|by|on)\s+)?"
    r"(?-i:(?:the\s+)?[A-Z][\w'.-]*(?:(?:\s+|,\s*)(?:(?:de|da|do|del|la|le|am|upon)\s+)?[A-Z][\w'.-]*){0,3})"
)
_PLACE = PLACE.replace("(?-i:", "(?P<place>(?-i:", 1) + ")"  # the same, its name captured as "place"
MONTH = words.MONTHS
ORDINAL = r"\d{1,2}(?:st|nd|rd|th)?"
WHEN = (
    rf"(?:(?:the\s+)?{ORDINAL}\s+(?:of\s+)?(?:{MONTH})\b\.?(?:,?\s+\d{{4}})?"
    rf"|(?:{MONTH})\.?\s+(?:the\s+)?{ORDINAL}\b(?:,?\s+\d{{4}})?"
    r"|\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}(?:/\d{2,4})?"
    rf"|(?:(?:next|this|on|coming)\s+)?(?:{words.WEEKDAYS})s?\b|tomorrow|tonight"
    rf"|next\s+(?:week|month|year|weekend)|in\s+(?:{MONTH})\b(?:\s+\d{{4}})?)"
)
FUTURE = (
    rf"\b(?:next\s+(?:week|month|year|spring|summer|autumn|fall|winter|weekend|{words.WEEKDAYS})"
    rf"|this\s+(?:week|month|year|spring|summer|autumn|fall|winter|weekend|{words.WEEKDAYS})"
    r"|in\s+(?:a\s+few|a\s+couple\s+of|two|three|four|five|six|\d+)\s+(?:days|weeks|months|years)"
    rf"|in\s+(?:{MONTH})\b|by\s+(?:{MONTH})\b|at\s+the\s+end\s+of\s+(?:the|this)\s+(?:year|month|week|summer)"
    r"|later\s+this\s+year|over\s+the\s+summer|in\s+the\s+(?:spring|summer|autumn|fall|winter|new\s+year)"
    rf"|at\s+christmas|soon|tomorrow|tonight|on\s+(?:{words.WEEKDAYS})\b)"
)
I_AM = r"\bI(?:'m|\s+am)\s+"
I_HAVE = r"\bI(?:'ve\s+got|\s+have\s+got|'ve|\s+have|\s+got)\s+"
# "I'm", "we're", or nothing at the start of a clause or after a comma or "and" in a first-person clause.
BE_OR_NOTHING = r"(?:\bI(?:'m|\s+am)\s+|\bwe(?:'re|\s+are)\s+|^\s*|,\s*|\band\s+)"
ADVERBS = r"(?:(?:also|still|now|actually|really|currently|just|recently|both|finally|apparently|officially)\s+)*"
_SEVERE = re.compile(
    r"\b(?:sever|serious|very|extreme|deathly|dangerous|high|really|super|bad|life|anaphyla)", ANY_CASE
)
_MILD = re.compile(r"\b(?:mild|slight|a bit|a little|somewhat|minor)", ANY_CASE)
_ACRONYMS = re.compile(
    r"\b(adhd|add|ibs|ocd|ptsd|pcos|copd|gerd|hiv|ms|acl|mcl|hrt|pots|nhs|gp|ceo|cto|ux|qa)\b", ANY_CASE
)
_END = r"(?=\s*(?:$|[,.!?;:)]|\s+(?:and|but|so|since|for|now|these|here|too|btw|as\s+well|because|though)\b))"


_SOMEONE_ELSE = re.compile(
    r"^\W*(?:my|our|his|her|their|the|a|an|one|some|this|that|he|she|they|it|its|everyone|people|someone|"
    r"(?-i:[A-Z][a-z]+)(?:'s|\s+(?:is|was|has|lives|works|from)))\b",
    ANY_CASE,
)


def _allowed_subject(clause: Clause, match: re.Match) -> bool:
    """A match without "I" before it speaks for the user at the start of a clause, or after a comma or
    "and" in a clause that is not about someone else: "and allergic to nuts" in "I'm vegan and allergic to
    nuts", "now living in London" in "originally from Lagos, now living in London"."""
    head = match.group(0)[:4].lower()
    if head.startswith(("i'm", "i am", "we'r", "we a", "i ")):
        return True
    return match.start() == 0 or clause.first_person or clause.listed or not _SOMEONE_ELSE.match(clause.text)


def _acronyms(text: str) -> str:
    return _ACRONYMS.sub(lambda m: m.group(1).upper(), text)


def _severity(text: str) -> str:
    if _MILD.search(text):
        return "mildly "
    return "severely " if _SEVERE.search(text) else ""


# --- identity --------------------------------------------------------------------------------------------
_NAME_SAID = re.compile(
    r"(?:\bmy\s+name\s+is|\bmy\s+name's|^\W*name's|^\W*name\s+is|\bcall\s+me|\bI'm\s+called|\bI\s+am\s+called|\bI\s+go\s+by|"
    r"\byou\s+can\s+call\s+me|\bpeople\s+call\s+me|\bthey\s+call\s+me)\s+"
    r"(?P<name>(?-i:[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*){0,2})|[a-z][a-z'-]+)",
    ANY_CASE,
)
_I_AM_NAME = re.compile(
    rf"{I_AM}(?P<name>(?-i:[A-Z][a-z][\w'-]*(?:\s+[A-Z][a-z][\w'-]*)?))"
    r"(?=\s*(?:$|[,.!?;:)]|\s+(?:and|from|here|by|btw|but|originally)\b))",
    ANY_CASE,
)
_NAME_ALONE = re.compile(
    r"^(?:(?:hi|hello|hey|hiya|yo|good\s+\w+)[\s,!]+)?(?:(?:this\s+is|it's|it\s+is)\s+(?P<a>"
    + NAME
    + r"(?:\s+"
    + NAME
    + r")?)|(?P<b>"
    + NAME
    + r")\s+here)\s*[.!,]?\s*$",
    ANY_CASE,
)
_AGE = re.compile(
    rf"(?:{I_AM}(?:now\s+|just\s+)?|(?:^|\bI(?:'ve)?\s+)(?:just\s+)?turned\s+|^(?=\d))(?P<age>\d{{1,3}})"
    r"(?:\s*(?:years?|yrs?)(?:\s+old)?|\s*(?:yo|y/o))?(?=\s*(?:$|[,.!;]|\s+(?:and|but|now|this|next|last|years)\b))",
    ANY_CASE,
)
_AGE_AFTER_NAME = re.compile(rf"{I_AM}{NAME}\s*,\s*(?P<age>\d{{2}})\s*(?:,|$|\.)", ANY_CASE)
_NATIONALITY = re.compile(
    rf"{I_AM}(?:(?:a|an|half|originally|proudly)\s+)*(?P<n>{words.NATIONALITIES})\b"
    r"(?=\s*(?:$|[,.!;]|\s+(?:and|but|by|born|citizen|national|living|based|who|so|myself)\b))",
    ANY_CASE,
)
_LEVEL = r"(?:(?:a\s+bit\s+of|a\s+little|some|basic|fluent|native|conversational|decent|good|broken)\s+)?"
_LANGUAGES = re.compile(
    rf"\bI\s+(?:(?:also|can|mostly|still)\s+)*speak\s+(?P<langs>{_LEVEL}(?:{words.LANGUAGES})"
    rf"(?:(?:\s*,\s*|\s+and\s+|\s*&\s*){_LEVEL}(?:{words.LANGUAGES}))*)\b"
    rf"|{I_AM}(?:also\s+)?fluent\s+in\s+(?P<fluent>(?:{words.LANGUAGES})(?:(?:\s*,\s*|\s+and\s+)(?:{words.LANGUAGES}))*)",
    ANY_CASE,
)


def _a_name(name: str) -> bool:
    first = name.split()[0].lower()
    return (
        first not in words.NOT_NAMES
        and first not in words.NOT_PLACES
        and not re.fullmatch(f"(?:{words.NATIONALITIES}|{words.LANGUAGES}|{words.DIETS})", first, ANY_CASE)
    )


def _languages(text: str) -> str:
    return re.sub(rf"\b(?:{words.LANGUAGES})\b", lambda m: m.group(0).title(), text, flags=ANY_CASE)


def identity(clause: Clause) -> Iterator[Fact]:
    """Name, age, nationality and languages: profile."""
    text = clause.text
    for pattern in (_NAME_SAID, _I_AM_NAME):
        for match in pattern.finditer(text):
            name = re.split(r"\s+(?:and|btw|but|by)\b", match.group("name"), flags=ANY_CASE)[0].strip(" '")
            if name and _a_name(name):
                yield Fact("profile", "name", f"Is called {name[:1].upper() + name[1:]}.")
    if (match := _NAME_ALONE.match(text)) and _a_name(name := match.group("a") or match.group("b")):
        yield Fact("profile", "name", f"Is called {name}.")
    for match in (*_AGE.finditer(text), *_AGE_AFTER_NAME.finditer(text)):
        if match.group(0)[:1].isdigit() and not clause.listed:
            continue
        if 5 <= int(match.group("age")) <= 110:
            yield Fact("profile", "age", f"Is {match.group('age')} years old.")
    for match in _NATIONALITY.finditer(text):
        yield Fact("profile", "nationality", f"Is {match.group('n').title()}.")
    for match in _LANGUAGES.finditer(text):
        if match.group("fluent"):
            yield Fact("profile", "languages", f"Is fluent in {_languages(match.group('fluent'))}.")
        else:
            yield Fact("profile", "languages", f"Speaks {_languages(match.group('langs'))}.")


# --- health ----------------------------------------------------------------------------------------------
_SEVERITY_WORDS = (
    r"(?:severely|seriously|very|extremely|deathly|dangerously|highly|really|super|badly|mildly|slightly|"
    r"a\s+bit|a\s+little|somewhat|quite|pretty|life-threateningly)"
)
_ALLERGIC_TO = re.compile(
    rf"{BE_OR_NOTHING}{ADVERBS}(?P<sev>{_SEVERITY_WORDS}\s+)?allergic\s+to\s+(?P<rest>[^.!?;]+)", ANY_CASE
)
# "I'm allergic", its allergen named just before ("I can't take ibuprofen, I'm allergic"; see
# ``Clause.antecedent``).
_ALLERGIC = re.compile(rf"{BE_OR_NOTHING}{ADVERBS}(?P<sev>{_SEVERITY_WORDS}\s+)?allergic\b(?!\s+to\b)", ANY_CASE)
_ALLERGEN_ITEM = re.compile(
    r"^\s*(?:(?:,|and|or|&|plus|as\s+well\s+as)\s*)*(?:also\s+|especially\s+)?(?:to\s+)?(?:all\s+|most\s+|some\s+)?"
    rf"(?P<what>(?:{words.ALLERGENS}|{words.MEDICINE_ENDINGS}|them|it|those))\b",
    ANY_CASE,
)
_ALLERGY_NOUN = re.compile(
    rf"(?:{I_HAVE}|\bI\s+suffer\s+from\s+){ADVERBS}(?:an?\s+)?(?P<sev>(?:[\w-]+\s+)?)"
    rf"(?:(?P<what>(?:{words.ALLERGENS})(?:\s+and\s+(?:{words.ALLERGENS}))?)\s+allerg(?:y|ies)\b"
    r"|allerg(?:y|ies)\s+to\s+(?P<rest>[^.!?;]+))",
    ANY_CASE,
)
_MY_ALLERGY = re.compile(
    rf"\bmy\s+(?P<what>{words.ALLERGENS})\s+allergy\s+(?:is|'s)\s+(?:(?:actually|now|only|just|quite|pretty|very|"
    r"really|getting|not\s+that)\s+)*(?P<sev>mild|severe|serious|bad|life-threatening|manageable|minor|worse)\b",
    ANY_CASE,
)
_INTOLERANT = re.compile(
    rf"{BE_OR_NOTHING}{ADVERBS}(?:(?:very|quite|mildly|slightly|severely|a\s+bit)\s+)?"
    rf"(?:(?P<what>{words.INTOLERANCES})[\s-]+intolerant\b|intolerant\s+to\s+(?P<to>(?:{words.INTOLERANCES}|{words.FOODS})))",
    ANY_CASE,
)
_INTOLERANCE = re.compile(
    rf"{I_HAVE}(?:an?\s+)?(?P<sev>(?:mild|severe|slight|bad|serious)\s+)?"
    rf"(?:(?P<what>{words.INTOLERANCES})\s+intolerance|intolerance\s+to\s+(?P<to>(?:{words.INTOLERANCES}|{words.FOODS})))",
    ANY_CASE,
)
_DIAGNOSED = (
    r"(?:have|'ve\s+got|'ve|got|suffer\s+from|suffer\s+with|live\s+with|'m\s+living\s+with|am\s+living\s+with|"
    r"was\s+diagnosed\s+with|'ve\s+been\s+diagnosed\s+with|have\s+been\s+diagnosed\s+with|got\s+diagnosed\s+with|"
    r"deal\s+with|struggle\s+with|'ve\s+had|have\s+had|'ve\s+been\s+living\s+with)"
)
_CONDITION = re.compile(
    rf"\bI\s*{ADVERBS}{_DIAGNOSED}\s+(?:(?:a|an|mild|severe|chronic|bad|terrible|really|diagnosed|some|serious|"
    rf"early|late|stage\s+\w+)\s+)*(?P<what>{words.CONDITIONS})\b(?P<tail>\s+(?:since|for)\s+[\w ]{{1,25}}?"
    r"|\s+(?:last|this)\s+(?:week|month|year)|\s+in\s+\d{4}|\s+as\s+a\s+(?:child|kid|teenager))?(?=\s*(?:$|[,.!?;]|\s+\w))",
    ANY_CASE,
)
_FOR_MY_CONDITION = re.compile(rf"\bfor\s+my\s+(?P<what>{words.CONDITIONS})\b", ANY_CASE)
# "renew my asthma inhaler", "my diabetes meds": a condition named by what treats it.
_MY_CONDITION_CARE = re.compile(
    rf"\bmy\s+(?P<what>{words.CONDITIONS})\s+(?:inhalers?|medication|medicine|meds|pills|tablets|treatment|"
    r"specialist|nurse|clinic|check-?ups?)\b",
    ANY_CASE,
)
_CONDITION_STATE = re.compile(
    rf"{BE_OR_NOTHING}{ADVERBS}(?:(?:partially|completely|totally|a\s+bit|severely|profoundly)\s+)?"
    rf"(?P<what>{words.CONDITION_STATES})\b(?P<tail>\s+in\s+(?:my|both)\s+\w+(?:\s+\w+)?)?{_END}",
    ANY_CASE,
)
_STATE_KEYS = {"diabetic": "diabetes", "asthmatic": "asthma", "epileptic": "epilepsy", "coeliac": "coeliac_disease"}
_RECURRING = re.compile(
    rf"\bI\s+(?:(?:often|sometimes|regularly|frequently|always|still|also|tend\s+to|usually)\s+)*"
    rf"(?:get|suffer\s+from|have|'ve\s+got)\s+(?:(?:really\s+)?(?:bad|terrible|awful|frequent|regular|chronic|"
    rf"occasional|severe)\s+)*(?P<what>{words.RECURRING})\b(?P<tail>\s+(?:(?:pretty|quite|very|really)\s+)?"
    r"(?:often|a\s+lot|regularly|frequently|sometimes|occasionally|every\s+(?:spring|summer|autumn|fall|winter|year|"
    r"month|week|day|morning)|in\s+(?:the\s+)?(?:spring|summer)))?",
    ANY_CASE,
)
_PREGNANT = re.compile(
    r"\b(?:I(?:'m|\s+am)|we(?:'re|\s+are))\s+(?:(?:now|currently|finally|also)\s+)*"
    r"(?:(?P<n>\d{1,2}|\w+)\s+(?P<unit>weeks?|months?)\s+)?pregnant\b",
    ANY_CASE,
)
_DOSE = r"(?P<dose>\d+(?:\.\d+)?\s?(?:mg|mcg|µg|g|ml|iu|units?)\s+(?:of\s+)?)?"
_FREQUENCY = (
    r"(?P<freq>\s+(?:daily|every\s+(?:day|morning|evening|night)|each\s+(?:day|morning|night)|twice\s+a\s+day|"
    r"once\s+a\s+day|three\s+times\s+a\s+day|at\s+night|in\s+the\s+morning|a\s+day))?"
)
_MEDICINE = rf"(?P<what>{words.MEDICINES}|{words.MEDICINE_ENDINGS})\b"
_TAKES = re.compile(
    rf"(?:\bI\s+{ADVERBS}(?:have\s+to\s+)?(?:take|'m\s+taking|am\s+taking|'ve\s+been\s+taking|have\s+been\s+taking|"
    rf"started\s+taking|need|rely\s+on)\s+|\band\s+(?:also\s+)?take\s+|(?:^|,\s*)take\s+){_DOSE}{_MEDICINE}{_FREQUENCY}",
    ANY_CASE,
)
_ON_MEDICINE = re.compile(
    rf"(?:\bI(?:'m|\s+am|'ve\s+been|\s+have\s+been|\s+was\s+put|\s+got\s+put|\s+started)\s+{ADVERBS}on\s+"
    rf"|^(?:been\s+|currently\s+)?on\s+|\band\s+(?:also\s+)?on\s+"
    rf"|\b(?:put|started|switched)\s+me\s+on\s+){_DOSE}{_MEDICINE}",  # "my doctor just put me on amlodipine"
    ANY_CASE,
)
_USES = re.compile(
    rf"\bI\s+{ADVERBS}use\s+(?P<what>an?\s+(?:inhaler|epipen|insulin\s+pump|hearing\s+aid|cpap[\w ]*))", ANY_CASE
)
_INJURED = re.compile(
    rf"\bI(?:'ve|\s+have|'d|\s+had)?\s+(?:(?:just|recently|also|kind\s+of|badly|completely)\s+)*"
    rf"(?:{words.INJURY_VERBS})\s+"
    rf"(?:my|both)\s+(?P<part>{words.BODY_PARTS})\b(?P<tail>[^,.;!?]{{0,40}})",
    ANY_CASE,
)
_BAD_PART = re.compile(
    rf"{I_HAVE}(?:a|an)\s+(?P<adj>bad|weak|dodgy|injured|broken|sprained|sore|fractured|torn|busted|gammy|bum|stiff|"
    rf"frozen|bad\s+lower)\s+(?P<part>{words.BODY_PARTS})\b",
    ANY_CASE,
)


def _allergens(rest: str, antecedent: str) -> list[str]:
    """The allergens a list names, in order, up to the first word that is none ("cats and also to dust")."""
    found = []
    while match := _ALLERGEN_ITEM.match(rest):
        what = match.group("what")
        if what.lower() in ("them", "it", "those"):
            what = antecedent
        if what:
            found.append(what.lower())
        rest = rest[match.end() :]
    return found


# Allergens that are counted: "a peanut allergy" is being allergic to peanuts.
_COUNTED = re.compile(
    r"^(?:peanut|nut|tree nut|brazil nut|almond|cashew|walnut|hazelnut|pistachio|pecan|egg|prawn|mussel|oyster|"
    r"strawberry|banana|tomato|peach|apple|orange|avocado|mushroom|onion|cat|dog|horse|rabbit|bee|wasp|feather|"
    r"dust mite|bee sting|wasp sting|insect sting|sulfa drug|kiwi)$",
    ANY_CASE,
)


def _plural(what: str) -> str:
    if not _COUNTED.match(what):
        return what
    if what.endswith("y"):
        return what[:-1] + "ies"
    return what + ("es" if what.endswith(("o", "ch", "sh")) else "s")


def _allergy(what: str, severity: str) -> Fact:
    return Fact("profile", f"{slug(what)}_allergy", f"Is {severity}allergic to {_plural(what)}.")


def _allergies(clause: Clause) -> Iterator[Fact]:
    text = clause.text
    epipen = bool(re.search(r"epi-?pen|anaphyla", text, ANY_CASE))
    for match in _ALLERGIC_TO.finditer(text):
        if _allowed_subject(clause, match):
            severity = _severity(match.group("sev") or "") or ("severely " if epipen else "")
            for what in _allergens(match.group("rest"), clause.antecedent):
                yield _allergy(what, severity)
    for match in _ALLERGY_NOUN.finditer(text):
        severity = _severity(match.group("sev") or "") or ("severely " if epipen else "")
        listed = [match.group("what")] if match.group("what") else _allergens(match.group("rest"), "")
        for what in listed:
            for each in re.split(r"\s+and\s+", what.lower()):
                yield _allergy(each, severity)
    if clause.antecedent and (match := _ALLERGIC.search(text)) and _allowed_subject(clause, match):
        for what in _allergens(clause.antecedent, ""):
            yield _allergy(what, _severity(match.group("sev") or "") or ("severely " if epipen else ""))
    for match in _MY_ALLERGY.finditer(text):
        severity = _severity(match.group("sev")) or ("severely " if match.group("sev").lower() == "worse" else "")
        yield _allergy(match.group("what").lower(), severity)


def _intolerances(clause: Clause) -> Iterator[Fact]:
    for match in _INTOLERANT.finditer(clause.text):
        if not _allowed_subject(clause, match):
            continue
        if what := match.group("what"):
            yield Fact("profile", f"{slug(what)}_intolerance", f"Is {what.lower()} intolerant.")
        else:
            yield Fact("profile", f"{slug(match.group('to'))}_intolerance", f"Is intolerant to {match.group('to')}.")
    for match in _INTOLERANCE.finditer(clause.text):
        what = (match.group("what") or match.group("to")).lower()
        severity = (match.group("sev") or "").strip().lower()
        article = "an" if not severity else ("an" if severity[0] in "aeiou" else "a")
        words_ = f"{article} {severity + ' ' if severity else ''}intolerance to {what}"
        yield Fact("profile", f"{slug(what)}_intolerance", f"Has {words_}.")


def _conditions(clause: Clause) -> Iterator[Fact]:
    text = clause.text
    for match in _CONDITION.finditer(text):
        what = re.sub(r"^(?:a|an)\s+", "", match.group("what"), flags=ANY_CASE)
        yield Fact("profile", slug(what), _acronyms(about_user(match.group(0))))
    for match in (*_FOR_MY_CONDITION.finditer(text), *_MY_CONDITION_CARE.finditer(text)):
        what = re.sub(r"^(?:a|an)\s+", "", match.group("what"), flags=ANY_CASE)
        yield Fact("profile", slug(what), _acronyms(sentence(f"has {match.group('what')}")))
    for match in _CONDITION_STATE.finditer(text):
        if not _allowed_subject(clause, match):
            continue
        what = re.sub(r"^(?:a|an)\s+", "", match.group("what").lower())
        content = sentence(f"is {match.group('what')}{third_person(match.group('tail') or '')}")
        yield Fact("profile", _STATE_KEYS.get(what, slug(what)), content)
    for match in _RECURRING.finditer(text):
        yield Fact("profile", slug(match.group("what")), _acronyms(about_user(match.group(0))))
    for match in _PREGNANT.finditer(text):
        weeks = f"{match.group('n')} {match.group('unit')} " if match.group("unit") else ""
        yield Fact("profile", "pregnancy", f"Is {weeks}pregnant.")


def _medicines(clause: Clause) -> Iterator[Fact]:
    text = clause.text
    for match in _TAKES.finditer(text):
        dose, freq = match.group("dose") or "", match.group("freq") or ""
        yield Fact(
            "profile", slug(match.group("what")), _acronyms(sentence(f"takes {dose}{match.group('what')}{freq}"))
        )
    for match in _ON_MEDICINE.finditer(text):
        dose = match.group("dose") or ""
        yield Fact("profile", slug(match.group("what")), _acronyms(sentence(f"is on {dose}{match.group('what')}")))
    for match in _USES.finditer(text):
        yield Fact("profile", slug(match.group("what")), sentence(f"uses {match.group('what')}"))


def _injuries(clause: Clause) -> Iterator[Fact]:
    for match in _INJURED.finditer(clause.text):
        tail = re.split(r"\s+(?:so|and|but|which|because)\b", match.group("tail"), maxsplit=1, flags=ANY_CASE)[0]
        span = match.group(0)[: len(match.group(0)) - len(match.group("tail"))] + tail
        yield Fact("profile", f"{slug(match.group('part'))}_injury", _acronyms(about_user(span)))
    for match in _BAD_PART.finditer(clause.text):
        part = f"{match.group('adj')} {match.group('part')}".lower()
        yield Fact("profile", slug(part), _acronyms(sentence(f"has a {part}")))


def health(clause: Clause) -> Iterator[Fact]:
    """Allergies and intolerances (with their severity), conditions, medicines and injuries: profile."""
    yield from _allergies(clause)
    yield from _intolerances(clause)
    yield from _conditions(clause)
    yield from _medicines(clause)
    yield from _injuries(clause)


# --- diet ------------------------------------------------------------------------------------------------
_DIET = re.compile(
    rf"{BE_OR_NOTHING}(?:(?:a|an|now|also|still|mostly|mainly|strictly|fully|completely|basically|pretty\s+much|"
    rf"actually|full-time|100%|a\s+strict|strict|fully|proud)\s+)*(?P<diet>{words.DIETS})\b"
    r"(?P<rest>\s+(?:household|family|here|now|these\s+days|since\s+[^,.;!?]+))?"
    r"(?=\s*(?:$|[,.!;:]|\s+(?:and|but|so|since|for|now|these|here|household|family|too|btw|as\s+well|myself)\b))",
    ANY_CASE,
)
_BECAME = re.compile(
    rf"(?:\bI\s+{ADVERBS}|^|,\s*|\band\s+)(?:went|have\s+gone|'ve\s+gone|turned|became|have\s+become|'ve\s+become|"
    rf"switched\s+to\s+being|switched\s+to|converted\s+to)\s+(?:(?:fully|completely|totally|full|100%)\s+)?"
    rf"(?P<diet>{words.DIETS})\b"
    r"(?P<tail>\s+(?:in|last|this|since|about|a)\s+[\w ]{1,20}?)?(?=\s*(?:$|[,.!;]|\s+and\b|\s+but\b))",
    ANY_CASE,
)
_ON_DIET = re.compile(
    rf"\b(?:I(?:'m|\s+am)|we(?:'re|\s+are))\s+{ADVERBS}on\s+(?:a|the)\s+(?:strict\s+)?(?P<plan>{words.DIET_PLANS})"
    r"(?:\s+diet)?\b",
    ANY_CASE,
)
_EATS = re.compile(
    r"\b(?:I|we)\s+(?:(?:try\s+to|mostly|only|mainly|always|usually|generally|strictly|now|also)\s+)*"
    rf"(?:eat|cook|keep)\s+(?:only\s+|strictly\s+)?(?P<what>{words.OBSERVANCES}|{words.DIET_PLANS})\b"
    r"(?P<tail>[^,.;!?]{0,30})",
    ANY_CASE,
)
_DOES_NOT_EAT = re.compile(
    r"\b(?:I|we)\s+(?:(?:also|just|really|generally|usually|mostly|strictly)\s+)*"
    r"(?P<neg>don't|do\s+not|can't|cannot|never|no\s+longer|won't|try\s+not\s+to)\s+"
    rf"(?P<verb>eat|drink|touch|have|consume)\s+(?:any\s+)?(?P<what>(?:{words.FOODS})(?:\s*(?:,|or|and|nor)\s*(?:{words.FOODS}))*)\b"
    r"(?P<tail>\s+(?:at\s+all|anymore|any\s+more|for\s+[^,.;!?]+|because\s+[^,.;!?]+|since\s+[^,.;!?]+))?",
    ANY_CASE,
)
_GAVE_UP = re.compile(
    r"\b(?:I|we)(?:'ve|\s+have)?\s+(?:(?:just|recently|completely|also|mostly)\s+)*(?P<verb>cut\s+out|given\s+up|gave\s+up|quit|"
    rf"stopped\s+eating|stopped\s+drinking|avoid|cut\s+down\s+on|cut\s+back\s+on|don't\s+touch)\s+(?P<what>{words.FOODS})\b"
    r"(?P<tail>[^,.;!?]{0,30})",
    ANY_CASE,
)
_NONE_FOR_ME = re.compile(
    rf"^(?:(?:and|also|oh|so|please)\s+)*no\s+(?P<what>(?:{words.FOODS})(?:\s*(?:,|or|and)\s*(?:{words.FOODS}))*)\s+for\s+me\b",
    ANY_CASE,
)
_MEAT = re.compile(r"^(?:meat|meat or fish|meat and fish|animal products)$", ANY_CASE)
_TEETOTAL = re.compile(r"^tee-?total", ANY_CASE)


def _food_key(what: str, prefix: str = "no") -> str:
    return "diet" if _MEAT.match(what) else f"{prefix}_{slug(what)}"


def _foods(listed: str) -> list[str]:
    return [
        w.strip().lower() for w in re.split(r"\s*(?:,|\bor\b|\band\b|\bnor\b)\s*", listed, flags=ANY_CASE) if w.strip()
    ]


def diet(clause: Clause) -> Iterator[Fact]:
    """Ways of eating ("I'm vegan", "I keep halal", "I don't eat pork", "I no longer eat meat"): preferences."""
    text = clause.text
    for match in _DIET.finditer(text):
        if not _allowed_subject(clause, match):
            continue
        what = match.group("diet").lower()
        if _TEETOTAL.match(what):
            yield Fact("preferences", "no_alcohol", "Does not drink alcohol.")
        else:
            yield Fact("preferences", "diet", sentence(f"is {re.sub(r'^strict ', 'strictly ', what)}"))
    for match in _BECAME.finditer(text):
        if _allowed_subject(clause, match):
            yield Fact("preferences", "diet", about_user(match.group(0)))
    for match in _ON_DIET.finditer(text):
        plan = match.group("plan").lower()
        key = "diet" if re.fullmatch(words.DIETS, plan, ANY_CASE) else f"{slug(plan)}_diet"
        yield Fact("preferences", key, sentence(f"is on a {plan} diet"))
    for match in _EATS.finditer(text):
        what = match.group("what").lower()
        key = "diet" if re.fullmatch(words.DIETS, what, ANY_CASE) else slug(what)
        yield Fact("preferences", key, about_user(match.group(0)))
    for match in _DOES_NOT_EAT.finditer(text):
        neg, verb, tail = match.group("neg").lower(), match.group("verb").lower(), match.group("tail") or ""
        said = f"no longer {verb}s" if neg == "no longer" else f"does not {verb}"
        for what in _foods(match.group("what")):
            yield Fact("preferences", _food_key(what), sentence(f"{said} {what}{third_person(tail)}"))
    for match in _GAVE_UP.finditer(text):
        prefix = "less" if "down" in match.group("verb") or "back" in match.group("verb") else "no"
        yield Fact("preferences", _food_key(match.group("what"), prefix), about_user(match.group(0)))
    for match in _NONE_FOR_ME.finditer(text):
        for what in _foods(match.group("what")):
            yield Fact("preferences", _food_key(what), sentence(f"does not eat {what}"))


# --- family and the people in the user's life ------------------------------------------------------------
_FAMILY = rf"(?:{words.FAMILY_WORDS})"
_KIN_ADJECTIVES = (
    r"(?:(?:little|big|older|younger|elder|eldest|oldest|youngest|baby|twin|teenage|teen|new|step|late|lovely|"
    r"beautiful|grown-up|adult|wonderful|amazing|only|two|three|four|(?:\d+|one|two|three|four|five|six|seven|eight|"
    r"nine|ten|eleven|twelve)[\s-]+(?:year|month)[\s-]+old)\s+)*"
)
_MY_KIN_NAMED = re.compile(
    rf"\b(?:my|our)\s+(?P<adj>{_KIN_ADJECTIVES})(?P<rel>{_FAMILY})"
    rf"(?:'s\s+name\s+is|'s\s+name's|\s+is\s+called|\s+is\s+named|\s+called|\s+named|\s+is|\s*,|\s*:)?\s+(?P<names>{NAMES})"
    r"(?P<after>.*)$",
    ANY_CASE,
)
_MY_KIN = re.compile(rf"\b(?:my|our)\s+(?P<adj>{_KIN_ADJECTIVES})(?P<rel>{_FAMILY})\s+(?P<after>.+)$", ANY_CASE)
_COUNT = r"(?P<count>a|an|one|two|three|four|five|six|seven|eight|nine|ten|\d+)"
_HAVE_KIN = re.compile(
    rf"\b(?:I|we)(?:\s+(?:also|now|both|just))*(?:'ve\s+got|'ve|\s+have\s+got|\s+have|\s+got|"
    rf"\s+(?:just\s+)?(?:adopted|rescued|bought))\s+"
    rf"{_COUNT}\s+(?P<adj>{_KIN_ADJECTIVES})(?P<rel>{_FAMILY})\b"
    rf"(?:(?:\s*,\s*|\s+(?:called|named)\s+|\s*:\s*)(?P<names>{NAMES}))?(?P<after>.*)$",
    ANY_CASE,
)
_HAVE_YEAR_OLD = re.compile(
    rf"\b(?:I|we)(?:\s+have|'ve\s+got|'ve)\s+(?:a|an)\s+(?P<age>\d+|\w+)[\s-]+year[\s-]+old\s+(?:called|named)\s+(?P<name>{NAME})",
    ANY_CASE,
)
_WITH_KIN = re.compile(
    rf"(?:\bwith|\band)\s+(?:my|our|a|an|two|three|four|\d+)\s+(?P<adj>{_KIN_ADJECTIVES})(?P<rel>{_FAMILY})\b"
    rf"(?:\s+(?P<names>{NAMES}))?",
    ANY_CASE,
)
_PARENT_OF = re.compile(
    r"\b(?:mum|mom|mother|dad|father|mam|parent)\s+of\s+(?P<count>two|three|four|five|six|\d+)\b", ANY_CASE
)
_MARITAL = re.compile(
    rf"(?:{I_AM}|\band\s+){ADVERBS}(?:(?:happily|recently|newly)\s+)?(?P<status>married|engaged|divorced|separated|widowed)"
    rf"\b(?:\s+to\s+(?P<name>{NAME}(?:\s+{NAME})?))?(?!\s+to\s+(?:my|the|this|a)\b)",
    ANY_CASE,
)
_CONTACT_NAMED = re.compile(
    rf"\bmy\s+(?P<rel>{words.CONTACT_WORDS})(?:'s\s+name\s+is|\s+is\s+called|\s+is|\s*,)\s+(?P<name>(?:Dr\.?\s+)?{NAME}(?:\s+{NAME})?)"
    rf"|(?P<name2>(?:Dr\.?\s+)?{NAME}(?:\s+{NAME})?)\s+is\s+my\s+(?P<rel2>{words.CONTACT_WORDS}|{_FAMILY})\b",
    ANY_CASE,
)
_VERBLIKE = re.compile(
    r"^(?:is|'s|are|was|were|has|had|have|just|recently|also|still|now|always|works|worked|lives|lived|loves|likes|"
    r"hates|goes|went|plays|studies|started|starts|turned|turns|visits|runs|teaches|passed|died|moved|got|gets|"
    r"does|did|will|start|live|work|love|owns|manages|retired|graduated|wants|needs|who)\b",
    ANY_CASE,
)
# A modal or a denial after a family member's name ("can't eat eggs"): it needs no "is" before it.
_MODAL = re.compile(
    r"^(?:can|can't|cannot|could|couldn't|doesn't|didn't|won't|isn't|wasn't|should|must|never)\b", ANY_CASE
)
_CONTRACTED = re.compile(
    r"^'s\s+(?:a|an|\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|just|now|also|still|been|"
    r"got|in|at|from|on|off|married|engaged|pregnant|allergic|intolerant|vegan|vegetarian|retired|autistic|"
    r"diabetic|deaf|blind|\w+ing)\b",
    ANY_CASE,
)
_TRANSIENT = re.compile(
    r"^(?:is|'s|was)\s+(?!(?:a|an|\d+|one|two|three|four|five|six|seven|eight|nine|ten)\b)", ANY_CASE
)
_NUMBERS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8, "nine": 9, "ten": 10,
    "eleven": 11, "twelve": 12,
}  # fmt: skip
_AGE_AFTER = re.compile(
    r"^\s*(?:,\s*)?(?:who\s+)?(?:is|'s|just\s+turned|turned|is\s+now|aged)?\s*"
    r"(?P<age>\d{1,2}|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"
    r"(?P<unit>\s*(?:months?|weeks?))?(?:\s*(?:years?|yrs?)(?:\s+old)?)?\b(?!\s*(?:am|pm|:|%))",
    ANY_CASE,
)


def _relation(rel: str) -> tuple[str, str]:
    """(key, word): "mum" is kept as "mother", "puppy" under "dog"; a partner keeps the user's word."""
    low = rel.lower()
    key = words.RELATION_KEYS.get(low, slug(low))
    word = key if key in ("mother", "father") or low == "boy" else low  # "my older boy Kojo" is a son
    return key, word


def _age_of(adjectives: str) -> str:
    match = re.search(r"(\d+|\w+)[\s-]+(year|month)[\s-]+old", adjectives, ANY_CASE)
    if not match:
        return ""
    number = _NUMBERS.get(match.group(1).lower(), match.group(1))
    return f"{number} months" if match.group(2).lower() == "month" else str(number)


def _predicate(after: str) -> tuple[str, str, bool]:
    """(age, what else, whether what else is denied) from what follows a family member's name: " is 15
    and obsessed with football". What is said of something of theirs ("'s husband has cancer") is not
    said of them."""
    age = ""
    if match := _AGE_AFTER.match(after):
        age = str(_NUMBERS.get(match.group("age").lower(), match.group("age")))
        age += f" {match.group('unit').strip()}" if match.group("unit") else ""
        after = after[match.end() :]
    if re.match(r"^['\u2019]s\b", after) and not _CONTRACTED.match(after.replace("\u2019", "'")):
        return age, "", False  # "Mei's husband has cancer": her husband's, not hers
    after = re.sub(r"^\s*['\u2019]s\b", "is", after)  # "Mei's married": she is
    after = re.sub(r"^\s*(?:,\s*|and\s+|who\s+)+", "", after.strip(), flags=ANY_CASE).rstrip(" .!?,")
    # "My son is Theo and he is allergic to eggs": what follows is said of them.
    after = re.sub(
        r"^(?:he|she|they)\s+(?=(?:is|'s|are|has|have|was|gets|takes|loves|likes)\b)", "", after, flags=ANY_CASE
    )
    after = re.sub(r"^(?:he|she)'s\b", "is", after, flags=ANY_CASE)
    after = re.sub(r"\s+(?:too|as\s+well)$", "", after, flags=ANY_CASE)
    if after and not _VERBLIKE.match(after) and not _MODAL.match(after):
        after = f"is {after}"
    return age, after, bool(_DENIED.search(after))


# "is not", "doesn't", "can't", "never": a denial, told of them only as a fact of its own (a diet).
_DENIED = re.compile(r"\bnot\b|n't\b|\bnever\b|\bcannot\b", ANY_CASE)


def _as_theirs(fact: Fact, who: str, key: str) -> Fact:
    """A family member's own fact: "Is allergic to eggs." -> "Their son Oliver is allergic to eggs."."""
    content = fact.content[:1].lower() + fact.content[1:]
    return Fact("entities", f"{key}_{fact.key}", f"Their {who} {content}")


def _their_facts(after: str, who: str, key: str) -> list[Fact]:
    """Health and diet facts about a family member, read as if they were the user's and reworded."""
    said = re.sub(r"^\s*(?:,\s*)?(?:who\s+)?(?:is|'s)\b", "I'm", after.strip(), flags=ANY_CASE)
    said = re.sub(r"^\s*(?:,\s*)?(?:who\s+)?(?:has)\b", "I have", said, flags=ANY_CASE)
    said = re.sub(r"^\s*(?:,\s*)?(?:who\s+)?(gets|takes|suffers|eats|keeps)\b", lambda m: "I " + m.group(1)[:-1], said)
    said = re.sub(r"^\s*(?:doesn't|does\s+not)\b", "I don't", said, flags=ANY_CASE)
    said = re.sub(r"^\s*(can't|cannot|can\s+not)\b", r"I \1", said, flags=ANY_CASE)
    pseudo = Clause(said, first_person=True)
    return [_as_theirs(fact, who, key) for finder in (health, diet) for fact in finder(pseudo)]


def _kin_named(match: re.Match) -> Iterator[Fact]:
    key, word = _relation(match.group("rel"))
    names = match.group("names")
    first = names.split()[0]
    if not _a_name(first):
        return
    adjectives = match.group("adj").strip().lower()
    adjective_words = re.sub(r"(\d+|\w+)[\s-]+(?:year|month)[\s-]+old\s*", "", adjectives).strip()
    age, rest, denied = _predicate(match.group("after"))
    age = age or _age_of(adjectives)
    theirs = _their_facts(rest, f"{word} {first}", f"{key}_{slug(first)}") if rest else []
    described = f", aged {age}" if age else ""
    # "is coming to Kyoto with me in April": their plan, not who they are.
    many = bool(re.search(r"\s(?:and|&)\s|,", names)) or word.endswith("s")
    planned = (
        not many
        and bool(re.match(r"^is\s+\w+ing\b", rest, ANY_CASE))
        and bool(re.search(rf"{WHEN}|{FUTURE}", rest, ANY_CASE))
    )
    if planned and not theirs and not denied:
        theirs = [
            Fact(
                "events",
                f"{key}_{slug(first)}_{_plan_key(rest)}",
                sentence(f"their {word} {first} {third_person(rest)}"),
            )
        ]
    elif rest and not theirs and not denied:
        described += f", who {third_person(rest)}"
    if key in words.SINGLE_RELATIONS:
        yield Fact("entities", key, sentence(f"their {word} is {names}{described}"))
    else:
        article = "" if many else ("an " if (adjective_words or word)[:1] in "aeiou" else "a ")
        kind = f"{adjective_words} {word}".strip()
        yield Fact(
            "entities", key if many else f"{key}_{slug(first)}", sentence(f"has {article}{kind}, {names}{described}")
        )
    yield from theirs


def _kin_unnamed(clause: Clause, match: re.Match) -> Iterator[Fact]:
    if _MY_KIN_NAMED.search(clause.text[match.start() :]):
        return
    key, word = _relation(match.group("rel"))
    after = match.group("after")
    if not _VERBLIKE.match(after) or re.match(r"^(?:'s|is)\s+(?:name|called|named)\b", after, ANY_CASE):
        return
    if after.startswith("'s") and not _CONTRACTED.match(after):
        return  # "my son's school": the school's, not the son's
    adjectives = match.group("adj").strip().lower()
    who = f"{adjectives} {word}".strip()
    theirs = _their_facts(after, who, key)
    if theirs:
        yield from theirs
    elif not _TRANSIENT.match(after) and not _DENIED.search(after):
        yield Fact("entities", key, sentence(f"their {who} {third_person(after)}"))


def _kin_had(match: re.Match) -> Iterator[Fact]:
    key, word = _relation(match.group("rel"))
    count = match.group("count").lower()
    names = match.group("names") or ""
    adjectives = match.group("adj").strip().lower()
    age = _age_of(adjectives)
    adjective_words = re.sub(r"(\d+|\w+)[\s-]+(?:year|month)[\s-]+old\s*", "", adjectives).strip()
    kind = f"{adjective_words} {word}".strip()
    if count in ("a", "an", "one"):
        count = "an" if kind[:1] in "aeiou" else "a"
        if kind.endswith("s") and key in ("children", "twins"):
            count = ""
    elif not kind.endswith("s"):
        kind = f"{kind}s" if not kind.endswith("y") else f"{kind[:-1]}ies"
    ages = re.match(r"^\s*,\s*(?:aged\s+)?(\d+(?:\s*(?:,|and|&)\s*\d+)*)\b", match.group("after"))
    described = f", aged {age}" if age else (f", aged {ages.group(1)}" if ages else "")
    named = f", {names}" if names and _a_name(names.split()[0]) else ""
    single = count in ("a", "an") and named
    stored = f"{key}_{slug(names.split()[0])}" if single else key
    yield Fact("entities", stored, sentence(f"has {count} {kind}{named}{described}"))


def family(clause: Clause) -> Iterator[Fact]:
    """Partner, children, parents, siblings and pets, with names and ages, and their own facts: entities."""
    text = clause.text
    for match in _MY_KIN_NAMED.finditer(text):
        yield from _kin_named(match)
    for match in _MY_KIN.finditer(text):
        yield from _kin_unnamed(clause, match)
    for match in _HAVE_KIN.finditer(text):
        yield from _kin_had(match)
    for match in _HAVE_YEAR_OLD.finditer(text):
        age = _NUMBERS.get(match.group("age").lower(), match.group("age"))
        name = match.group("name")
        yield Fact("entities", f"child_{slug(name)}", f"Has a child, {name}, aged {age}.")
    if re.search(r"\b(?:live|living|lives|based)\b", text, ANY_CASE) or re.search(r"(?:^|,)\s*with\b", text, ANY_CASE):
        for match in _WITH_KIN.finditer(text):
            if match.group("names") or not re.match(r"(?:with|and)\s+(?:my|our)", match.group(0), ANY_CASE):
                yield from _kin_had(_HaveLike(match))
            else:
                key, word = _relation(match.group("rel"))
                yield Fact("entities", key, sentence(f"lives with their {word}"))
    for match in _PARENT_OF.finditer(text):
        yield Fact("entities", "children", f"Has {match.group('count')} children.")
    for match in _MARITAL.finditer(text):
        status, name = match.group("status").lower(), match.group("name")
        yield Fact("entities", "partner", sentence(f"is {status}{' to ' + name if name else ''}"))
    for match in _CONTACT_NAMED.finditer(text):
        rel, name = (match.group("rel") or match.group("rel2")), (match.group("name") or match.group("name2"))
        if _a_name(name.replace("Dr. ", "").replace("Dr ", "")):
            key, word = _relation(rel)
            if key in words.SINGLE_RELATIONS:
                yield Fact("entities", key, f"Their {word} is {name}.")
            elif re.fullmatch(_FAMILY, rel, ANY_CASE):
                article = "an" if word[:1] in "aeiou" else "a"
                yield Fact("entities", f"{key}_{slug(name)}", f"Has {article} {word}, {name}.")
            else:
                yield Fact("entities", f"{key}_{slug(name)}", f"Their {word} is {name}.")


class _HaveLike:
    """A "with my husband and two dogs" match read as "I have two dogs"."""

    def __init__(self, match: re.Match) -> None:
        self._match = match
        head = match.group(0).split()[1].lower()
        self._count = "a" if head in ("my", "our") else head

    def group(self, name: str) -> str:
        if name == "count":
            return self._count
        if name == "after":
            return ""
        return self._match.group(name) or ""


# --- work ------------------------------------------------------------------------------------------------
_JOB = rf"(?P<job>(?:[\w&-]+\s+){{0,3}}?(?:{words.PROFESSIONS}))"
_OCCUPATION = re.compile(
    rf"(?:{I_AM}|\bI\s+{ADVERBS}work\s+as\s+|\bas\s+|^|,\s*|\band\s+|\bboth\s+){ADVERBS}(?:a|an|(?<=m\s)the)\s+{_JOB}s?\b"
    r"(?P<tail>\s+(?:by\s+(?:training|trade|profession)|in\s+(?-i:[a-z])[\w ]{2,30}?(?=\s*(?:$|[,.!;]))))?"
    r"(?=\s*(?:$|[,.!;:)]|\s+(?:at|in|for|and|but|so|by|with|who|since|from|doing|on|working|here|myself|based|"
    r"living)\b))",
    ANY_CASE,
)
_OCCUPATION_PLURAL = re.compile(
    rf"\b(?:and\s+I|we)\s+are\s+(?:both\s+|all\s+)?(?P<job>{words.PROFESSIONS})s\b", ANY_CASE
)
_LISTED_JOB = re.compile(rf"^(?:a\s+|an\s+)?(?P<job>(?:[\w&-]+\s+){{0,2}}?(?:{words.PROFESSIONS}))$", ANY_CASE)
_SELF_EMPLOYED = re.compile(
    rf"{I_AM}{ADVERBS}(?P<what>self-employed|self\s+employed|unemployed|a\s+freelancer|freelance)\b", ANY_CASE
)
_I_DO_WORK = re.compile(
    r"\bI\s+do\s+(?P<what>(?:[\w-]+\s+){0,2}(?:photography|design|consulting|accounting|translation|tutoring|"
    r"catering|plumbing|nursing|research|coding|programming|marketing|illustration|copywriting|editing|bookkeeping))\b",
    ANY_CASE,
)
_RETIRED = re.compile(
    rf"\bI(?:'m|\s+am|'ve|\s+have)?\s+{ADVERBS}(?:(?:happily|semi-)\s*)?retired\b(?P<tail>\s+from\s+[\w ]{{2,30}}?)?"
    r"(?P<when>\s+(?:\w+\s+years?\s+ago|last\s+year|in\s+\d{4}))?(?=\s*(?:$|[,.!;]|\s+and\b))",
    ANY_CASE,
)
_TEACHES = re.compile(
    rf"\bI\s+{ADVERBS}(?:teach|study|lecture\s+in|research)\s+(?P<what>[\w -]{{2,40}}?)"
    r"(?P<where>\s+(?:at|in)\s+[\w' -]{2,40}?)?(?=\s*(?:$|[,.!;]|\s+(?:and|but|so|to|for)\b))",
    ANY_CASE,
)
_STUDYING = re.compile(
    rf"(?:{I_AM}|,\s*|^)(?:currently\s+)?studying\s+(?P<what>[a-z][\w -]{{2,40}}?)"
    r"(?P<where>\s+(?:at|in)\s+[\w' -]{2,40}?)?(?=\s*(?:$|[,.!;]|\s+(?:and|but|so)\b))",
    ANY_CASE,
)
_BUSINESS = re.compile(
    rf"\bI\s+{ADVERBS}(?:run|own|started|founded|co-founded|have)\s+(?:my\s+own|our\s+own|a|an|my)\s+"
    r"(?:(?:own|small|little|family|tiny)\s+)*(?P<biz>bakery|business|company|startup|shop|coffee\s+shop|cafe|café|"
    r"restaurant|bar|pub|salon|studio|agency|consultancy|practice|clinic|firm|farm|store|bookshop|gym|hotel|b&b)\b",
    ANY_CASE,
)
_LEADS = re.compile(
    rf"\bI\s+{ADVERBS}(?:manage|lead|run|head|head\s+up|oversee|supervise)\s+(?:a|the|our)\s+"
    r"(?P<what>(?:[\w-]+\s+){0,3}?(?:team|group|department|unit|squad|division))\b(?P<tail>\s+of\s+\d+(?:\s+\w+)?)?",
    ANY_CASE,
)
_ON_TEAM = re.compile(
    rf"(?:{I_AM}{ADVERBS}(?:on|in|part\s+of|a\s+member\s+of|with)|\bI\s+{ADVERBS}(?:joined|moved\s+to|switched\s+to))"
    r"\s+the\s+(?P<team>(?:[\w-]+\s+){1,3}?)team\b(?P<tail>\s+(?:last|this)\s+(?:week|month|year))?",
    ANY_CASE,
)
_PROMOTED = re.compile(
    rf"\bI\s+{ADVERBS}(?:got|was|have\s+been|'ve\s+been)\s+promoted\s+to\s+(?P<job>[\w -]{{3,40}}?)"
    r"(?=\s+at\b|\s*$|[,.!])",
    ANY_CASE,
)
ORG = r"(?P<org>(?-i:(?:the\s+)?[A-Z][\w&.'-]*(?:\s+(?:[A-Z][\w&.'-]*|of|and|&)){0,3}))"
_EMPLOYERS = tuple(
    re.compile(pattern, ANY_CASE)
    for pattern in (
        rf"\bI\s*{ADVERBS}(?:work|'m\s+working|am\s+working|have\s+worked|'ve\s+worked|'ve\s+been\s+working|"
        rf"have\s+been\s+working)(?:\s+(?:as\s+(?:a|an)\s+[\w -]{{3,40}}?|part-time|full-time|remotely|nights|"
        rf"[\w-]+\s+shifts|[\w-]+\s+days\s+a\s+week))?\s+(?:at|for|with)\s+{ORG}",
        rf"\bI(?:'ve|\s+have)\s+been\s+(?:at|with)\s+{ORG}\s+for\b",
        rf"(?:\bI\s+|^){ADVERBS}(?:started|joined|got)\s+(?:(?:a\s+new|a|my\s+new)\s+(?:job|role|position)\s+)?"
        rf"(?:at|with)\s+{ORG}",
        rf"\bI\s+{ADVERBS}joined\s+{ORG}",
        rf"{I_AM}(?:a|an|the)\s+[\w -]{{3,40}}?\s+(?:at|for|with)\s+{ORG}",
        rf"\bpromoted\s+to\s+[\w -]{{3,40}}?\s+at\s+{ORG}",
    )
)
_SCHEDULE = re.compile(
    rf"\bI\s+{ADVERBS}(?:(?:usually|mostly|normally|only)\s+)?work\s+(?P<what>(?:from\s+home|remotely|part-time|"
    r"part\s+time|full-time|full\s+time|nights|night\s+shifts|days|weekends|evenings|mornings|early\s+shifts|"
    r"late\s+shifts|shifts|\d+[\w -]*?shifts|(?:one|two|three|four|five|six|\d)\s+days\s+a\s+week|"
    r"\d+\s+hours?\s+a\s+week)"
    # "I work night shifts as a nurse": the job is a fact of its own.
    r"[^,.;!?]{0,40}?)(?=\s*(?:$|[,.!;?]|\s+(?:and|but|so)\b)|\s+as\s+an?\s)",
    ANY_CASE,
)
_OFFICE_DAYS = re.compile(
    rf"\bI\s+{ADVERBS}(?:go|come)\s+(?:in)?to\s+(?:the\s+)?office\s+(?:only\s+)?(?:on\s+)?"
    rf"(?:(?:{words.WEEKDAYS})s?(?:\s*(?:,|and|&)\s*)?)+",
    ANY_CASE,
)
_SHIFT_STARTS = re.compile(
    r"\bmy\s+(?:shift|shifts|workday|working\s+day|work\s+day|day)\s+(?:usually\s+|normally\s+)?(?:starts|begins|ends|finishes)"
    r"\s+at\s+[^,.;!?]+",
    ANY_CASE,
)


def _org(name: str) -> str:
    return re.sub(r"\s+(?:of|and|&)$", "", name.strip().rstrip(".'"))


def work(clause: Clause) -> Iterator[Fact]:
    """Job, employer, team and working hours: profile."""
    text = clause.text
    for match in _OCCUPATION.finditer(text):
        if not _allowed_subject(clause, match) and not re.match(r"\s*(?:as|and|both)\b", match.group(0), ANY_CASE):
            continue
        if match.group(0).lower().startswith("as") and not re.search(r"\b(?:I|we)\b", text[: match.start()], ANY_CASE):
            continue
        job = match.group("job").lower()
        article = "an" if job[:1] in "aeiou" else "a"
        yield Fact("profile", "occupation", _acronyms(sentence(f"is {article} {job}{match.group('tail') or ''}")))
    for match in _OCCUPATION_PLURAL.finditer(text):
        job = match.group("job").lower()
        yield Fact("profile", "occupation", sentence(f"is {'an' if job[:1] in 'aeiou' else 'a'} {job}"))
    if clause.listed and (match := _LISTED_JOB.match(text.strip())):
        job = match.group("job").lower()
        yield Fact("profile", "occupation", sentence(f"is {'an' if job[:1] in 'aeiou' else 'a'} {job}"))
    for pattern in (_SELF_EMPLOYED, _I_DO_WORK, _RETIRED, _TEACHES, _STUDYING, _BUSINESS, _PROMOTED):
        for match in pattern.finditer(text):
            if pattern is _STUDYING and not _allowed_subject(clause, match):
                continue
            yield Fact("profile", "occupation", _acronyms(about_user(match.group(0))))
    for match in _LEADS.finditer(text):
        yield Fact("profile", "team", about_user(match.group(0)))
    for match in _ON_TEAM.finditer(text):
        yield Fact("profile", "team", _acronyms(about_user(match.group(0))))
    for pattern in _EMPLOYERS:
        for match in pattern.finditer(text):
            org = _org(match.group("org"))
            if org and _a_name(org.removeprefix("the ")):
                yield Fact("profile", "employer", _acronyms(f"Works at {org}."))
    for match in _SCHEDULE.finditer(text):
        yield Fact("profile", "work_schedule", about_user(match.group(0)))
    for match in (*_SHIFT_STARTS.finditer(text), *_OFFICE_DAYS.finditer(text)):
        yield Fact("profile", "work_schedule", about_user(match.group(0).rstrip(" ,&")))


# --- places ----------------------------------------------------------------------------------------------
_LIVES = re.compile(
    r"\b(?:I|we)(?P<aux>'m|'re|\s+am|\s+are|'ve|\s+have)?\s*(?:(?:now|currently|still|just|recently|also|both|happily|"
    r"finally|been)\s+)*(?P<verb>live|living|lived|based|located|settled|residing|reside)\s+(?P<prep>(?:just\s+)?"
    rf"(?:in|outside|near|outside\s+of|close\s+to))\s+{_PLACE}"
    r"(?P<since>\s+(?:since\s+\d{4}|for\s+(?:\w+\s+)?years))?",
    ANY_CASE,
)
# "I've been in Madrid 6 years now": a stay counted in years is where they live.
_BEEN_YEARS = re.compile(
    rf"\bI(?:'ve|\s+have)\s+{ADVERBS}been\s+(?P<prep>in)\s+{_PLACE}\s+(?:for\s+)?(?:\d+|a\s+few|several|many|two|three|"
    r"four|five|six|seven|eight|nine|ten)\s+years\b",
    ANY_CASE,
)
_LIVING = re.compile(
    rf"(?:^|,\s*|\bbut\s+|\band\s+)(?:(?:now|currently)\s+)?(?:living|based|located|have\s+lived|'ve\s+lived)\s+"
    rf"(?P<prep>in|near)\s+"
    rf"{_PLACE}",
    ANY_CASE,
)
# "I'm a vegan chef based in Oslo": where the user works and lives, said of them in passing.
_BASED = re.compile(rf"{I_AM}(?:a|an)\s+(?:[\w-]+\s+){{1,4}}?(?:based|living)\s+(?P<prep>in|near)\s+{_PLACE}", ANY_CASE)
_SPLIT_TIME = re.compile(
    r"\bI\s+split\s+my\s+time\s+between\s+(?P<a>(?-i:[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?))\s+and\s+"
    r"(?P<b>(?-i:[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?))",
    ANY_CASE,
)
_MOVED = re.compile(
    r"\b(?:I|we)(?:'ve|\s+have)?\s*(?:(?:just|recently|finally|also|now|both)\s+)*(?:moved|relocated|emigrated)\s+"
    r"(?:from\s+(?-i:[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?)\s+)?"  # "we moved from Rotterdam to Utrecht"
    rf"(?:back\s+)?(?:here\s+)?to\s+{_PLACE}",
    ANY_CASE,
)
_FROM = re.compile(
    rf"(?:{I_AM}{ADVERBS}(?:(?:originally|actually|born\s+and\s+raised)\s+)?|(?:^|,\s*)(?:originally\s+)?)"
    rf"from\s+{_PLACE}",
    ANY_CASE,
)
_GREW_UP = re.compile(
    r"(?:\bI\s+|^)(?:grew\s+up|was\s+born|was\s+raised|born\s+and\s+raised|raised|born)\s+(?:and\s+(?:raised|bred)\s+)?"
    rf"(?:in|near|outside)\s+{_PLACE}",
    ANY_CASE,
)
_HOMETOWN = re.compile(rf"\bmy\s+home\s*town\s+(?:is|was)\s+{_PLACE}", ANY_CASE)


def _a_place(place: str) -> bool:
    return bool(place) and place.split()[0].lower().strip(",") not in words.NOT_PLACES


def places(clause: Clause) -> Iterator[Fact]:
    """Where the user lives (or has just moved to) and where they are from: profile."""
    text = clause.text
    for match in _LIVES.finditer(text):
        if match.group("verb").lower() == "lived" and not match.group("aux"):
            continue  # "I lived in Paris" is where they were, not where they are
        if _a_place(place := match.group("place")):
            since = match.group("since") or ""
            yield Fact("profile", "location", sentence(f"lives {match.group('prep').lower()} {place}{since}"))
    for match in _BEEN_YEARS.finditer(text):
        if _a_place(place := match.group("place")):
            yield Fact("profile", "location", f"Lives in {place}.")
    for match in _LIVING.finditer(text):
        if _allowed_subject(clause, match) and _a_place(place := match.group("place")):
            yield Fact("profile", "location", sentence(f"lives {match.group('prep').lower()} {place}"))
    for match in _BASED.finditer(text):
        if _a_place(place := match.group("place")):
            yield Fact("profile", "location", sentence(f"lives {match.group('prep').lower()} {place}"))
    for match in _SPLIT_TIME.finditer(text):
        yield Fact("profile", "location", f"Splits their time between {match.group('a')} and {match.group('b')}.")
    for match in _MOVED.finditer(text):
        if _a_place(place := match.group("place")):
            yield Fact("profile", "location", f"Lives in {place}.")
    for match in _FROM.finditer(text):
        if _allowed_subject(clause, match) and _a_place(place := match.group("place")):
            yield Fact("profile", "origin", f"Is from {place}.")
    for pattern in (_GREW_UP, _HOMETOWN):
        for match in pattern.finditer(text):
            if _a_place(match.group("place")):
                yield Fact("profile", "origin", about_user(match.group(0)))


# --- dates and plans -------------------------------------------------------------------------------------
_BIRTHDAY = re.compile(
    rf"\bmy\s+birthday\s*(?:is|'s|falls)?\s*(?:on\s+)?(?:the\s+)?(?P<date>{WHEN})",
    ANY_CASE,
)
_THEIR_BIRTHDAY = re.compile(
    rf"\b(?:my\s+(?P<rel>{_FAMILY})'s|(?P<name>{NAME})'s)\s+(?P<what>birthday|\d+(?:st|nd|rd|th))\s+(?:is|'s)\s+"
    rf"(?:on\s+)?(?P<date>{WHEN})",
    ANY_CASE,
)
_ANNIVERSARY = re.compile(
    rf"\b(?:our|my)\s+(?:wedding\s+)?anniversary\s+(?:is|'s)\s+(?:on\s+)?(?P<date>{WHEN})", ANY_CASE
)
_MARRIED_ON = re.compile(rf"\b(?:we|I)\s+got\s+married\s+(?:on|in)\s+(?P<date>{WHEN}|\d{{4}})", ANY_CASE)
_EVENT = re.compile(
    rf"(?:\b(?:my|our|the)\s+|{I_HAVE}(?:(?:a|an|my|the|our)\s+)?|\bI(?:'m|\s+am)\s+having\s+(?:(?:a|an|my|the)\s+)?"
    rf"|\bwe\s+have\s+(?:a|an|our|the)\s+)(?P<event>(?:[\w'-]+\s+){{0,3}}(?:{words.EVENTS}))\b"
    rf"|^(?P<bare>(?:(?!(?:I|I'm|we|we're|you|he|she|they|it|it's)\b)[\w'-]+\s+)?(?:{words.EVENTS}))\b",
    ANY_CASE,
)
_TRAVEL = re.compile(
    rf"{I_AM}(?:flying|travelling|traveling|going|heading|driving)\s+(?:back\s+)?to\s+"
    rf"{_PLACE}",
    ANY_CASE,
)
_GOING_TO = re.compile(
    r"(?:\b(?:I|we)(?:'m|'re|\s+am|\s+are)\s+|^)(?:(?:also|finally|definitely|really|actually|still|now|seriously)\s+)*"
    r"(?:going\s+(?:back\s+)?to|planning\s+to|planning\s+on|planning|about\s+to|aiming\s+to|due\s+to|set\s+to|"
    r"scheduled\s+to|intending\s+to)\s+(?P<what>[^,;!?]+)",
    ANY_CASE,
)
_DECIDED = re.compile(
    r"\bI(?:'ve|\s+have)?\s+(?:(?:just|finally)\s+)?(?:decided|plan|intend|aim)\s+to\s+(?P<what>[^,;!?]+)", ANY_CASE
)
_EXPECTING = re.compile(
    r"\b(?:I|we)(?:'m|'re|\s+am|\s+are)\s+(?:having|expecting)\s+(?P<what>a\s+baby|twins|a\s+boy|a\s+girl|"
    r"our\s+(?:first|second|third|fourth)(?:\s+(?:baby|child))?)(?P<rest>[^,;!?]*)",
    ANY_CASE,
)
_MOVING = re.compile(
    r"\b(?:I|we)(?:'m|'re|\s+am|\s+are)\s+(?:(?:also|finally|probably|planning\s+on|officially)\s+)*"
    rf"(?:moving|relocating|emigrating)\s+(?:back\s+)?to\s+{_PLACE}(?P<rest>[^,;!?]*)",
    ANY_CASE,
)
_PROGRESSIVE = re.compile(
    r"\b(?:I|we)(?:'m|'re|\s+am|\s+are)\s+(?:(?:also|finally|officially|actually|both)\s+)*"
    r"(?P<verb>(?!(?:going|living|working|feeling|thinking|hoping|trying|looking|wondering|doing|moving|relocating|"
    r"flying|travelling|traveling|heading|having|expecting|emigrating|getting(?!\s+married)|planning|studying|taking|"
    r"learning|currently|still|just)\b)[a-z]+ing)\b(?P<rest>[^,;!?]*)",
    ANY_CASE,
)
_WHEN_FIRST = re.compile(
    rf"^(?P<when>{FUTURE})\s*,?\s*(?:I|we)\s+(?P<verb>start|begin|move|leave|fly|go|finish|graduate|retire|join|get|"
    r"take|'m|am|'re|are)\b(?P<rest>[^,;!?]*)",
    ANY_CASE,
)
# "We booked the Hoshinoya ryokan for three nights", "I've reserved a table at Noma for Friday": what was
# arranged ("I booked it" says nothing by itself), and for when or how long.
_BOOKED = re.compile(
    r"\b(?:I|we)(?:'ve|\s+have)?\s+(?:(?:just|already|finally|also|now|both)\s+)*(?:booked|reserved)\s+"
    r"(?P<what>(?!(?:it|them|this|that|these|those|one|something|anything|nothing|everything|yesterday|today|"
    r"tonight|tomorrow|last|next|already|online|early|late|ahead)\b)[^,;!?.]+?)"
    r"(?=\s+(?:for|at|in|on|from|to|with|until)\b|[,;!?.]|$)"
    r"[^,;!?]*",
    ANY_CASE,
)
_KEY_NOISE = re.compile(
    rf"\b(?:{WHEN}|{FUTURE}|going|gonna|try\s+to|start(?:ing)?(?:\s+to)?|try|having|getting|a\s+new|new|the|my|our)\b",
    ANY_CASE,
)


def _plan_key(what: str) -> str:
    return slug(_KEY_NOISE.sub(" ", what)) or slug(what)


def dates(clause: Clause) -> Iterator[Fact]:
    """Birthdays, anniversaries and dated events: events."""
    text = clause.text
    for match in _BIRTHDAY.finditer(text):
        yield Fact("events", "birthday", sentence(f"their birthday is on {match.group('date')}"))
    for match in _THEIR_BIRTHDAY.finditer(text):
        if match.group("rel"):
            key, word = _relation(match.group("rel"))
            who = f"their {word}'s"
        elif _a_name(match.group("name")):
            key, who = slug(match.group("name")), f"{match.group('name')}'s"
        else:
            continue
        what = "birthday" if match.group("what").lower() == "birthday" else f"{match.group('what')} birthday"
        yield Fact("events", f"{key}_birthday", sentence(f"{who} {what} is on {match.group('date')}"))
    for match in _ANNIVERSARY.finditer(text):
        yield Fact("events", "anniversary", sentence(f"their anniversary is on {match.group('date')}"))
    for match in _MARRIED_ON.finditer(text):
        yield Fact("events", "anniversary", about_user(match.group(0)))
    if re.search(WHEN, text, ANY_CASE) or re.search(FUTURE, text, ANY_CASE):
        for match in _EVENT.finditer(text):
            event = match.group("event") or match.group("bare")
            if "birthday" in event.lower() and (_BIRTHDAY.search(text) or _THEIR_BIRTHDAY.search(text)):
                continue
            yield Fact("events", slug(event), about_user(text))
            break
        for match in _TRAVEL.finditer(text):
            if _a_place(match.group("place")):
                yield Fact("events", f"trip_to_{slug(match.group('place'))}", about_user(text))


def plans(clause: Clause) -> Iterator[Fact]:
    """What the user is going to do: events."""
    text = clause.text
    for pattern in (_GOING_TO, _DECIDED):
        for match in pattern.finditer(text):
            said = text[match.start() :]
            if re.match(r"^(?:going|planning|about|due|set|scheduled|aiming|intending)\b", said, ANY_CASE):
                said = f"I'm {said}"  # "Planning to propose at Christmas" has left its subject out
            yield Fact("events", _plan_key(match.group("what")), about_user(said))
    for match in _EXPECTING.finditer(text):
        yield Fact("events", "baby", about_user(match.group(0)))
    for match in _BOOKED.finditer(text):
        yield Fact("events", f"booked_{_plan_key(match.group('what'))}", about_user(match.group(0).rstrip(". ")))
    for match in _MOVING.finditer(text):
        if _a_place(match.group("place")):
            yield Fact("events", f"move_to_{slug(match.group('place'))}", about_user(match.group(0)))
    for match in _PROGRESSIVE.finditer(text):
        if re.search(FUTURE, text, ANY_CASE) or re.search(WHEN, text, ANY_CASE):
            rest = f"{match.group('verb')}{match.group('rest')}"
            yield Fact("events", _plan_key(rest), _moved_time_last(text, match))
    if match := _WHEN_FIRST.match(text):
        rest = f"{match.group('verb')}{match.group('rest')}"
        said = about_user(text[match.end("when") :].lstrip(" ,"))
        yield Fact(
            "events",
            _plan_key(re.sub(r"^(?:'m|am|'re|are)\s+", "", rest, flags=ANY_CASE)),
            sentence(f"{said[:-1]} {match.group('when')[:1].lower()}{match.group('when')[1:]}"),
        )


def _moved_time_last(text: str, match: re.Match) -> str:
    """ "This summer we're driving to Croatia" -> "Is driving to Croatia this summer."."""
    before = text[: match.start()].strip(" ,")
    said = about_user(text[match.start() :])
    if before and re.fullmatch(FUTURE, before, ANY_CASE):
        return sentence(f"{said[:-1]} {before[:1].lower() + before[1:]}")
    return said


# --- preferences and habits ------------------------------------------------------------------------------
_LIKES = re.compile(
    r"\bI\s*(?:(?:now|actually|also|still|really|much|strongly|genuinely|absolutely|just|honestly|definitely|"
    r"totally|do|kind\s+of|kinda)\s+){0,3}"
    r"(?P<verb>prefer|like|love|enjoy|adore|hate|dislike|detest|loathe|can't\s+stand|cannot\s+stand|can't\s+bear|"
    r"don't\s+like|do\s+not\s+like|don't\s+enjoy|don't\s+want|do\s+not\s+want|would\s+rather|'d\s+rather|"
    r"'d\s+prefer|would\s+prefer)\s+(?P<what>[^.!?;]{2,120}?)(?=[.!?;]|,\s*|\s+(?:but|and\s+I|so|because)\b|$)"
    r"|(?:\bI(?:'m|\s+am)\s+|^|,\s*)(?:(?:honestly|really|totally|kind\s+of|a\s+bit|so|also|just)\s+)*"
    r"(?P<verb2>obsessed\s+with|(?:a\s+)?(?:big\s+|huge\s+|massive\s+)?fan\s+of|not\s+(?:a\s+)?(?:big\s+|huge\s+)?fan\s+of|"
    r"into|not\s+into|crazy\s+about|passionate\s+about)\s+(?P<what2>[^.!?;]{2,120}?)(?=[.!?;]|,\s*|\s+(?:but|and\s+I|so)\b|$)",
    ANY_CASE,
)
_THIRD_PERSON_VERBS = {
    "prefer": "Prefers", "like": "Likes", "love": "Loves", "enjoy": "Enjoys", "adore": "Loves",
    "hate": "Dislikes", "dislike": "Dislikes", "detest": "Dislikes", "loathe": "Dislikes",
    "can't stand": "Dislikes", "cannot stand": "Dislikes", "can't bear": "Dislikes", "don't like": "Dislikes",
    "do not like": "Dislikes", "don't enjoy": "Dislikes", "don't want": "Does not want",
    "do not want": "Does not want", "would rather": "Would rather", "'d rather": "Would rather",
    "'d prefer": "Prefers", "would prefer": "Prefers", "obsessed with": "Loves", "fan of": "Likes",
    "into": "Likes", "crazy about": "Loves", "passionate about": "Loves", "not fan of": "Dislikes",
    "not into": "Dislikes",
}  # fmt: skip
_FILLER_END = re.compile(
    r"\s+(?:much|lately|these\s+days|a\s+lot|so\s+much|too|as\s+well|at\s+all|honestly|really|tbh|though|anyway)$",
    ANY_CASE,
)
_FAVOURITE = re.compile(
    r"\bmy\s+(?:all-time\s+|absolute\s+)?favou?rite\s+(?P<what>[\w -]{2,30}?)\s+(?:is|are|'s)\s+(?P<value>[^,.;!?]+)",
    ANY_CASE,
)
_INSTRUCTION_VERBS = (
    r"keep|use|write|answer|reply|respond|give|address|talk|speak|stick\s+to|avoid|don't|do\s+not|stop|include|"
    r"add|show|send|format|make|be|explain|spell|list|mention|cite|quote|check"
)
_PLEASE = re.compile(
    rf"\bplease\s+(?P<always>always\s+|never\s+)?(?P<verb>{_INSTRUCTION_VERBS})\b(?P<rest>[^.!?;]*)"
    rf"|^(?P<always2>always\s+|never\s+)?(?P<verb2>{_INSTRUCTION_VERBS})\b(?P<rest2>[^.!?;]*?)\s*,?\s*please\b"
    r"|^(?P<what>(?!(?:yes|yeah|ok|okay|sure|more|thanks|thank\s+you|no)\b)[\w -]{2,30}?)\s+please\s*[.!]?$"
    r"|\bplease\s+no\s+(?P<none>[\w -]{2,40}?)(?=\s*(?:$|[,.!;]|\s+(?:either|too)\b))"
    r"|(?:^|\bplease\s+)(?P<always3>always|never)\s+(?P<rest3>[^.!?;]{3,120}?)(?=[.!?;]|$)",
    ANY_CASE,
)
_TRAIT = re.compile(
    rf"{I_AM}(?:(?:a|an|such\s+a|definitely\s+a|more\s+of\s+a|totally\s+a|very\s+much\s+a|very\s+much\s+an)\s+)*"
    r"(?P<trait>morning\s+person|night\s+person|night\s+owl|early\s+bird|early\s+riser|evening\s+person)\b",
    ANY_CASE,
)
_HANDED = re.compile(
    rf"{BE_OR_NOTHING}(?P<trait>left-handed|right-handed|ambidextrous|an\s+introvert|an\s+extrovert)\b", ANY_CASE
)
_HABIT = re.compile(
    r"\b(?:I|we)\s+(?P<adv>usually|always|often|normally|typically|generally|tend\s+to|regularly|mostly|"
    r"every\s+(?:day|morning|evening|night|week|weekend|month|weekday|\w+day))\s+(?P<what>[^.!?;]{3,120}?)(?=[.!?;]|$)",
    ANY_CASE,
)
_FREQUENCY_AFTER = re.compile(
    r"\b(?:I|we)\s+(?P<verb>[a-z]+)\s+(?P<what>[^.!?;]{0,60}?)\s*(?P<freq>every\s+(?:day|morning|evening|night|week|weekend|"
    r"month|weekday|(?:mon|tues|wednes|thurs|fri|satur|sun)day(?:\s+(?:morning|evening|night|afternoon))?)|"
    r"(?:once|twice|three\s+times|four\s+times|\d+\s+times)\s+(?:a|per)\s+(?:day|week|month)|daily|weekly|"
    r"on\s+(?:mon|tues|wednes|thurs|fri|satur|sun)days|most\s+(?:days|mornings|evenings|nights|weekends))\b",
    ANY_CASE,
)
_FREQUENCY_FIRST = re.compile(
    r"^(?P<freq>every\s+\w+(?:\s+(?:morning|evening|night|afternoon))?|on\s+\w+days|most\s+\w+)\s*,?\s*"
    r"(?:I|we)\s+(?P<rest>[^.!?;]+)",
    ANY_CASE,
)


def _preference_subject(verb: str, what: str) -> str:
    subject = re.sub(r"^(?:to|being)\s+", "", what, flags=ANY_CASE)
    splitter = r"\b(?:over|than|instead\s+of|rather\s+than|better\s+than|more\s+than)\b"
    if verb.startswith("prefer"):
        splitter += r"|\bto\b"
    subject = re.split(splitter, subject, maxsplit=1, flags=ANY_CASE)[0]
    return re.sub(r"\s+(?:better|more|most)$", "", subject.strip(), flags=ANY_CASE)


def preferences(clause: Clause) -> Iterator[Fact]:
    """Likes, dislikes, favourites and how the user wants to be answered: preferences."""
    text = clause.text
    for match in _LIKES.finditer(text):
        verb = " ".join((match.group("verb") or match.group("verb2")).lower().split())
        verb = re.sub(r"^(?:a\s+)?(?:big\s+|huge\s+|massive\s+)?", "", verb).replace("not a ", "not ")
        verb = re.sub(r"^not\s+(?:big\s+|huge\s+)?", "not ", verb)
        what = _FILLER_END.sub("", (match.group("what") or match.group("what2")).strip(" ,"))
        if not what or re.match(r"^(?:it|that|this|them|you|to\s+(?:know|see|hear|think))\b", what, ANY_CASE):
            continue
        said = _THIRD_PERSON_VERBS.get(verb, verb.capitalize())
        yield Fact("preferences", slug(_preference_subject(verb, what)), sentence(f"{said} {third_person(what)}"))
    for match in _FAVOURITE.finditer(text):
        yield Fact("preferences", f"favourite_{slug(match.group('what'))}", about_user(match.group(0)))
    for match in _PLEASE.finditer(text):
        yield _instruction(match)
    for match in _TRAIT.finditer(text):
        yield Fact("patterns", slug(match.group("trait")), sentence(f"is a {match.group('trait').lower()}"))
    for match in _HANDED.finditer(text):
        if _allowed_subject(clause, match):
            trait = re.sub(r"^an\s+", "", match.group("trait").lower())
            yield Fact("profile", slug(trait), sentence(f"is {match.group('trait').lower()}"))


def _instruction(match: re.Match) -> Fact:
    if match.group("what"):
        return Fact("preferences", slug(match.group("what")), sentence(f"asks for {third_person(match.group('what'))}"))
    if match.group("none"):
        return Fact("preferences", f"no_{slug(match.group('none'))}", sentence(f"asks for no {match.group('none')}"))
    always = (match.group("always") or match.group("always2") or match.group("always3") or "").strip().lower()
    verb = (match.group("verb") or match.group("verb2") or "").lower()
    rest = (
        match.group("rest") if match.group("rest") is not None else (match.group("rest2") or match.group("rest3") or "")
    )
    if verb in ("don't", "do not"):
        always, verb = "never", ""
    asked = " ".join(part for part in (verb, rest.strip()) if part)
    key = f"{always}_{slug(asked)}" if always else slug(asked)
    phrase = f"{always} {asked}" if always else asked
    return Fact("preferences", key, sentence(f"asks to {third_person(phrase)}"))


def habits(clause: Clause) -> Iterator[Fact]:
    """What the user usually does: patterns. Weak: a clause that said something else keeps that instead."""
    text = clause.text
    for match in _HABIT.finditer(text):
        yield Fact("patterns", slug(match.group("what")), about_user(match.group(0)), weak=True)
    for match in _FREQUENCY_AFTER.finditer(text):
        yield Fact(
            "patterns",
            slug(f"{match.group('verb')} {match.group('what')}"),
            about_user(text[match.start() :]),
            weak=True,
        )
    if match := _FREQUENCY_FIRST.match(text):
        said = about_user(f"I {match.group('rest')}")
        yield Fact(
            "patterns", slug(match.group("rest")), sentence(f"{said[:-1]} {match.group('freq').lower()}"), weak=True
        )


# Plans before dates: "I'm going to run the Lisbon marathon in October" is a plan, keyed by what is planned.
FINDERS: tuple[Finder, ...] = (identity, health, diet, family, work, places, plans, dates, preferences, habits)
