"""How a memory is written: its key (a stable, readable slug of its subject), its label (the key as a person
reads it), and its text (a sentence about the user, in the third person, that can go into a prompt as is).
"""

from __future__ import annotations

import re

from foundation.ai.extractive import STOPWORDS
from foundation.ai.memory_words import (
    CHILD_WORDS,
    DIET_PLANS,
    DIETS,
    FOOD_ALLERGENS,
    FOODS,
    MEDICINE_ALLERGENS,
    MEDICINE_ENDINGS,
    MEDICINES,
    OBSERVANCES,
    PARENT_WORDS,
    PARTNER_WORDS,
    RELATION_KEYS,
    RELATIVE_WORDS,
    each,
    word_set,
)

KEY_WORDS = 4
KEY_MAX_CHARS = 255
# Small words kept inside a key when they join two others: "oat_milk_in_coffee" reads, "oat_milk_coffee" less.
JOINERS = word_set("in on with for at of from before after without under over by")
_DETERMINERS = word_set("a an the my our your their his her its some any this that these those")
_KEY_TOKEN = re.compile(r"[A-Za-z0-9]+(?:'[A-Za-z]+)?")
# Plurals that are not ("always", "diabetes") and words whose "s" is their own.
_KEEP_S = word_set(
    "always sometimes perhaps diabetes series species news measles mumps lens bus gas yes this his hers its ours "
    "yours theirs whereas plus thus chaos canvas atlas iris aids pms ms ibs pcos pots covid status bonus virus "
    "census campus cactus octopus asparagus hummus couscous crohns lupus physics maths mathematics economics "
    "politics athletics gymnastics aerobics pilates glasses trousers jeans shorts pants scissors"
)


# Nouns in "-ie", whose plural is no "-y" word: "movies" is "movie", not "movy".
_IE_NOUNS = word_set(
    "movie cookie pie tie lie zombie brownie smoothie calorie rookie selfie veggie hoodie foodie newbie genie "
    "aussie goalie birdie budgie collie doggie hippie indie kiddie lassie magpie nightie oldie pixie sweetie "
    "yuppie auntie bootie cutie groupie junkie roomie techie quickie bogie eyrie prairie sortie"
)


def singular(word: str) -> str:
    """A word's singular, for keys: "peanuts" and "peanut" are one subject."""
    word = word.lower()
    if word.endswith("'s"):
        word = word[:-2]
    if word in _KEEP_S or len(word) <= 3 or not word.endswith("s"):
        return word
    if word[:-1] in _IE_NOUNS:
        return word[:-1]
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "shes", "ches", "xes", "zes", "oes")):
        return word[:-2]
    if word.endswith(("ss", "us", "sis", "itis", "xis")):
        return word
    return word[:-1]


def slug(text: str, *, words: int = KEY_WORDS) -> str:
    """A key from a subject: its first ``words`` words that are not stop words, singular and lower case,
    with a small word that joins two of them ("oat milk in my coffee" -> "oat_milk_in_coffee")."""
    parts: list[str] = []
    joiner = ""
    after_word = False  # the last token read (determiners aside) was a word kept in the key
    content = 0
    for token in _KEY_TOKEN.findall(text.replace("-", " ")):
        low = token.lower()
        if low in JOINERS:
            joiner = low if after_word else ""
            after_word = False
            continue
        if low in _DETERMINERS:
            continue
        if low in STOPWORDS and not low.isdigit():
            joiner, after_word = "", False
            continue
        if content == words:
            break
        if joiner:
            parts.append(joiner)
            joiner = ""
        parts.append(singular(low))
        content += 1
        after_word = True
    return "_".join(parts)[:KEY_MAX_CHARS] or "item"


# The fixed keys, as a person reads them.
_FIXED_LABELS = {
    "name": "Name",
    "age": "Age",
    "location": "Home",
    "origin": "From",
    "nationality": "Nationality",
    "languages": "Languages",
    "occupation": "Job",
    "employer": "Employer",
    "team": "Team",
    "work_schedule": "Work schedule",
    "diet": "Diet",
    "partner": "Partner",
    "mother": "Mother",
    "father": "Father",
    "children": "Children",
    "birthday": "Birthday",
    "anniversary": "Anniversary",
    "pregnancy": "Pregnancy",
}
_CAPITALISED = re.compile(r"(?<![.!?:]\s)(?<!^)\b([A-Z][\w'-]*)")


def label(key: str, content: str = "") -> str:
    """A key as a person reads it: "oat_milk_in_coffee" -> "Oat milk in coffee", "daughter_mia" ->
    "Daughter Mia" (names keep the capitals the text gives them)."""
    if key in _FIXED_LABELS:
        return _FIXED_LABELS[key]
    capitals = {word.lower(): word for word in _CAPITALISED.findall(content or "")}
    words = [capitals.get(part, part) for part in key.split("_") if part]
    text = " ".join(words) or key
    return text[:1].upper() + text[1:]


# --- what a memory means for the person -----------------------------------------------------------------
# A memory is found by the words of the question, and "what should I avoid eating?" shares none with "Is
# severely allergic to peanuts.": what a fact of health or diet means for the person is said with it, for
# searching and judging it (its vector, its judged relevance), never in its text.
FOOD_TO_AVOID = "A food to avoid eating."
MEDICINE_TO_AVOID = "A medicine to avoid taking."
SOMETHING_TO_AVOID = "Something to avoid."
DIET = "What they eat and avoid eating."
MEDICATION = "A medicine they take, for their health."
# Who the person is, said with the facts that say it for the same reason: "where did I grow up?" shares no
# word with "Is from Kumasi.", nor "what do I do for a living?" with "Is a structural engineer.". Not their
# name or age: "Is called Freya." and "Is 38 years old." share words with any question about them, and
# such a meaning would answer "what are my cats called?" and "how old is my son?" with the person's own.
HOME = "Where they live now: their home town and city."
ORIGIN = "Where they come from and grew up: their hometown."
JOB = "What they do for a living: their job and work."
EMPLOYER = "Where they work: the company they work for."
WORK_TIMES = "When they work: their working days and hours."
LANGUAGES_SPOKEN = "The languages they speak."
FAMILY = "Their family: partner, children, parents, brothers and sisters."
_WHO_THEY_ARE = {
    "location": HOME,
    "origin": ORIGIN,
    "nationality": ORIGIN,
    "occupation": JOB,
    "employer": EMPLOYER,
    "work_schedule": WORK_TIMES,
    "languages": LANGUAGES_SPOKEN,
}
# The meanings embedded with their facts: what a fact of health or diet means is what questions about it
# say. Who the person is is only matched against the question ("The languages they speak." in the
# vector of "Speaks Dutch." brought it up for "which languages are spoken in Switzerland?").
EMBEDDED_WITH_THE_FACT = frozenset((FOOD_TO_AVOID, MEDICINE_TO_AVOID, SOMETHING_TO_AVOID, DIET, MEDICATION))
IMPLICATIONS = (
    FOOD_TO_AVOID,
    MEDICINE_TO_AVOID,
    SOMETHING_TO_AVOID,
    DIET,
    MEDICATION,
    HOME,
    ORIGIN,
    JOB,
    EMPLOYER,
    WORK_TIMES,
    LANGUAGES_SPOKEN,
    FAMILY,
)
# Questions that need a meaning without asking for it: a meal to plan or order for the person needs what they
# cannot or will not eat ("plan a dinner menu for me tonight" and "A meal, a dish or a recipe to cook or
# order for them." are 0.52 apart, where "A food to avoid eating." is 0.34).
MEAL = "A meal, a dish or a recipe to cook or order for them."
# "Any dietary restrictions?" is how a host or a booking form asks it.
DIETARY_NEEDS = "Their dietary restrictions and requirements."
ASKED_AS = {FOOD_TO_AVOID: (MEAL, DIETARY_NEEDS), DIET: (MEAL, DIETARY_NEEDS)}
# The category of the people around the person, whose facts are theirs.
ENTITIES = "entities"
# The first word of the keys of the person's relatives ("son_kwesi", "mother", "sister_in_law"); their
# colleagues, friends and pets are not their family.
_RELATION_WORDS = each("|".join((PARTNER_WORDS, CHILD_WORDS, PARENT_WORDS, RELATIVE_WORDS)))
_RELATIVES = frozenset(key for key in (RELATION_KEYS.get(word, word) for word in _RELATION_WORDS) if key.isalpha())


def _subjects(*phrases: str) -> frozenset[str]:
    """Each phrase of these |-separated lists as a key's subject gives it ("tree nuts" -> "tree_nut")."""
    return frozenset(slug(phrase) for listed in phrases for phrase in each(listed))


_FOOD_ALLERGENS = _subjects(FOOD_ALLERGENS)
_MEDICINE_ALLERGENS = _subjects(MEDICINE_ALLERGENS)
_MEDICINES = _subjects(MEDICINES)
_FOODS = _subjects(FOODS)
_DIET_WORDS = _subjects(DIETS, DIET_PLANS, OBSERVANCES)
_COELIAC = frozenset({"coeliac", "celiac", "coeliac_disease", "celiac_disease"})
_MEDICINE_ENDING = re.compile(rf"(?:{MEDICINE_ENDINGS})")


def implication(category: str, key: str) -> str:
    """What the memory under ``key`` means for the person, in words questions about it use: a food
    allergy, an intolerance or coeliac disease is "A food to avoid eating.", a medicine allergy "A
    medicine to avoid taking.", a way of eating "What they eat and avoid eating.", a medicine taken "A
    medicine they take, for their health."; who the person is (their home, origin, job, employer, working
    days, languages) what each of those is; a relative's fact, that it is their family (a son's
    allergy is not a food the person must avoid); "" for any other memory, whose own words say it."""
    if category == ENTITIES:
        return FAMILY if singular(key.split("_", 1)[0]) in _RELATIVES else ""
    if key in _WHO_THEY_ARE:
        return _WHO_THEY_ARE[key]
    subject, _, kind = key.rpartition("_")
    medicine = subject in _MEDICINE_ALLERGENS or bool(_MEDICINE_ENDING.fullmatch(subject))
    if kind == "allergy":
        return FOOD_TO_AVOID if subject in _FOOD_ALLERGENS else MEDICINE_TO_AVOID if medicine else SOMETHING_TO_AVOID
    if kind == "intolerance" or key in _COELIAC:
        return FOOD_TO_AVOID
    eats = key.split("_", 1)
    if key == "diet" or key in _DIET_WORDS or kind == "diet" or (eats[0] in ("no", "less") and eats[-1] in _FOODS):
        return DIET
    if key in _MEDICINES or _MEDICINE_ENDING.fullmatch(key):
        return MEDICATION
    return ""


def relative_fact(key: str) -> tuple[str, str]:
    """(the relation, what the fact means for them) of a relative's own fact: "sister_mei_diet" is
    ("sister", "What they eat and avoid eating."), "partner_shellfish_allergy" ("partner", "A food to
    avoid eating."); ("", "") for a memory that is no relative's fact of health or diet."""
    parts = key.split("_")
    relation = singular(parts[0])
    if relation not in _RELATIVES:
        return "", ""
    # The key may hold their name ("son_theo_egg_allergy"): of the meanings its endings give, the most
    # specific ("theo_egg" is no food anyone knows; "egg" is).
    meanings = [meaning for start in range(1, len(parts)) if (meaning := implication("", "_".join(parts[start:])))]
    specific = [meaning for meaning in meanings if meaning != SOMETHING_TO_AVOID]
    return (relation, (specific or meanings)[0]) if meanings else ("", "")


# Relations named together that the facts keep one by one.
_EACH_OF = {"children": {"son", "daughter"}, "child": {"son", "daughter"}, "parents": {"mother", "father"}}


def relations_named(text: str) -> set[str]:
    """The relations a text names, as their facts are stored ("my husband" is the partner, "my kids" a son
    or a daughter)."""
    named = set()
    for word in {w.lower() for w in re.findall(r"[A-Za-z-]+", text)}:
        key = RELATION_KEYS.get(word, word)
        named |= {singular(key), *_EACH_OF.get(key, ())}
    return named & _RELATIVES


# --- first person to third ------------------------------------------------------------------------------
_IRREGULAR = {"have": "has", "do": "does", "go": "goes", "be": "is", "am": "is", "are": "is"}
_UNCHANGED = word_set(
    "can could will would should must might may shall was were did had used got went tore broke grew began came "
    "became gave left lost met ran saw sold spent thought told wrote won fell felt found kept knew paid read said "
    "sat sent stood swam taught understood woke bought brought caught fought hurt quit cut put let set took made "
    "gave drove flew rode spoke chose froze hid shook stole struck swore threw wore forgot forgave slept sprang"
)
_ADVERBS = word_set(
    "usually always often normally typically generally sometimes mostly rarely also just still really only now "
    "actually recently currently regularly even already mainly honestly definitely literally basically both "
    "finally officially seriously probably strictly mostly occasionally frequently constantly"
)


def third_person_verb(verb: str) -> str:
    """ "take" -> "takes", "go" -> "goes", "study" -> "studies"; past forms and modals stay."""
    low = verb.lower()
    if low in _IRREGULAR:
        return _IRREGULAR[low]
    if low in _UNCHANGED or low.endswith("ed") or not low.isalpha():
        return low
    if low.endswith(("s", "sh", "ch", "x", "z", "o")):
        return low + "es"
    if low.endswith("y") and len(low) > 2 and low[-2] not in "aeiou":
        return low[:-1] + "ies"
    return low + "s"


_LEADING_FILLER = re.compile(
    r"^(?:(?:so|and|but|also|oh|well|btw|by the way|anyway|ok|okay|plus|then|that|just so you know|fyi)\b[\s,:-]*)+",
    re.IGNORECASE,
)
_LEADING_SUBJECT = (
    (re.compile(r"^(?:I|we)(?:'m|'re| am| are)\b\s*", re.IGNORECASE), "is "),
    (re.compile(r"^(?:I|we)(?:'ve| have)(?: got)?\b\s*(?=(?:a|an|the|my|our|no|some|two|three|\d)\b)", re.I), "has "),
    (re.compile(r"^(?:I|we)(?:'ve| have)\b\s*", re.IGNORECASE), "has "),
    (re.compile(r"^(?:I|we)(?:'d| would)\b\s*", re.IGNORECASE), "would "),
    (re.compile(r"^(?:I|we)(?:'ll| will)\b\s*", re.IGNORECASE), "will "),
    (re.compile(r"^I was\b\s*", re.IGNORECASE), "was "),
    (re.compile(r"^we were\b\s*", re.IGNORECASE), "were "),
    (re.compile(r"^(?:I|we) (?:don't|do not)\b\s*", re.IGNORECASE), "does not "),
    (re.compile(r"^(?:I|we) (?:can't|cannot|can not)\b\s*", re.IGNORECASE), "cannot "),
    (re.compile(r"^(?:my|our)\b\s*", re.IGNORECASE), "their "),
)
_PRONOUNS = (
    (re.compile(r"\bI'm\b"), "they're"),
    (re.compile(r"\bI am\b"), "they are"),
    (re.compile(r"\bI've\b"), "they've"),
    (re.compile(r"\bI'd\b"), "they'd"),
    (re.compile(r"\bI'll\b"), "they'll"),
    (re.compile(r"\bI was\b"), "they were"),
    (re.compile(r"\bI\b"), "they"),
    (re.compile(r"\bmyself\b", re.IGNORECASE), "themselves"),
    (re.compile(r"\bmine\b", re.IGNORECASE), "theirs"),
    (re.compile(r"\b(?:my|our)\b", re.IGNORECASE), "their"),
    (re.compile(r"\b(?:me|us)\b"), "them"),
    (re.compile(r"\bours\b"), "theirs"),
    (re.compile(r"\bwe're\b", re.IGNORECASE), "they're"),
    (re.compile(r"\bwe've\b", re.IGNORECASE), "they've"),
    (re.compile(r"\bwe\b", re.IGNORECASE), "they"),
)


def third_person(text: str) -> str:
    """First-person words inside a phrase in the third person: "my coffee black" -> "their coffee black"."""
    for pattern, replacement in _PRONOUNS:
        text = pattern.sub(replacement, text)
    return text


def sentence(text: str) -> str:
    """A phrase as a sentence: white space folded, first letter capitalised, one full stop."""
    text = " ".join(text.split()).strip(" ,;:-")
    text = re.sub(r"[.!?]+$", "", text).rstrip(" ,;:-")
    return (text[:1].upper() + text[1:] + ".") if text else ""


def about_user(text: str) -> str:
    """What the user said of themselves, as a sentence about them: "I take my tea with honey" ->
    "Takes their tea with honey.", "my locker code is 4411" -> "Their locker code is 4411."."""
    text = _LEADING_FILLER.sub("", " ".join(text.split())).strip()
    for pattern, replacement in _LEADING_SUBJECT:
        if pattern.match(text):
            return sentence(replacement + third_person(pattern.sub("", text, count=1)))
    match = re.match(r"^(?:I|we)\s+(.+)$", text, re.IGNORECASE)
    if match:
        words = match.group(1).split(" ")
        verb = next((i for i, word in enumerate(words) if word.lower() not in _ADVERBS), len(words))
        if verb < len(words) and words[verb].isalpha():
            words[verb] = third_person_verb(words[verb])
            head, rest = " ".join(words[: verb + 1]), " ".join(words[verb + 1 :])
            return sentence(f"{head} {third_person(rest)}")
    return sentence(third_person(text))
