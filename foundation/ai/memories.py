"""Long-term memory extraction: what the user says about themselves and the people and things in their life,
what they ask to be remembered, and the problems the assistant solved for them.

Only the user's own words become facts about them; a case pairs a problem the user reported with the
assistant's answer to it. Every memory has a stable key per subject, so a later statement on the same
subject updates the earlier memory instead of adding a second one ("my peanut allergy is actually mild"
updates the allergy; "I moved to Porto" updates ``location``), and a text that reads as a sentence about the
user ("Is severely allergic to peanuts.", "Has a daughter, Mia, aged 6.") that can go into a prompt as is.

What is kept, and in which of the six categories:

=============  ====================================================================  ===========  ===================
kind           examples                                                              category     keys
=============  ====================================================================  ===========  ===================
identity       "Hi, I'm Priya", "I'm 34", "I'm Dutch", "I speak Hindi and Tamil"     profile      name, age,
                                                                                                  nationality,
                                                                                                  languages
health         allergies and intolerances with their severity, conditions,            profile      peanut_allergy,
               medicines, injuries, pregnancy                                                     lactose_intolerance,
                                                                                                  asthma, metformin,
                                                                                                  wrist_injury
diet           "I'm vegetarian", "I keep halal", "I don't eat pork",                  preferences  diet, halal, no_pork
               "I no longer eat meat"
family         partner, children with names and ages, parents, siblings, pets,       entities     partner, mother,
               and a family member's own facts, worded as theirs                                  daughter_mia, dog,
                                                                                                  son_oliver_egg_allergy
people         named contacts: "my manager is Ines", "Dr. Patel is my GP"             entities     manager, doctor_...
work           job, employer, team, working hours                                    profile      occupation, employer,
                                                                                                  team, work_schedule
places         lives in, moved to, from, grew up in                                   profile      location, origin
dates          birthdays, anniversaries, dated events                                 events       birthday,
                                                                                                  anniversary,
                                                                                                  dentist_appointment
plans          "I'm going to", "we're planning", "next month I start", moves          events       run_lisbon_marathon,
                                                                                                  move_to_berlin
preferences    likes, dislikes, favourites, "please always/never ...", traits          preferences  oat_milk_in_coffee,
                                                                                                  always_answer_in_...
habits         "I usually ...", "every weekend I ...", "I'm a morning person"         patterns     go_to_gym, ...
requests       "remember that ...", "please remember: ...", "don't forget ...",       by content   the subject:
               "note that ...", "keep in mind ...", "for future reference ...":                   locker_code, ...
               always kept; what no other pattern reads becomes a note about the
               user (events when dated, patterns for a habit, entities for a thing,
               else profile)
cases          a problem the user reported and the assistant's fix                   cases        the problem
=============  ====================================================================  ===========  ===================

Never kept: questions ("am I allergic to anything?"), jokes and hyperbole ("I'm allergic to Mondays", anything
said with "lol"), hypotheticals ("if I were vegan ...", "maybe I'll move"), other people's facts as the
user's ("my colleague is allergic to nuts"), reported speech ("my doctor said I might be ..."), negated
statements ("I'm not vegetarian"; but "I no longer eat meat" is a diet), and text the product wrote (the
caller removes it first).

Several facts in one sentence each become a memory: the sentence is cut into clauses where a new subject
starts, and every finder reads every clause (``memory_facts``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from foundation.ai import memory_facts as facts
from foundation.ai import memory_words as words
from foundation.ai.extractive import STOPWORDS, split_sentences
from foundation.ai.memory_text import (
    EMBEDDED_WITH_THE_FACT,
    FAMILY,
    KEY_MAX_CHARS,
    about_user,
    implication,
    label,
    slug,
)

__all__ = [
    "CATEGORIES",
    "CONTENT_MAX_CHARS",
    "EMBEDDED_WITH_THE_FACT",
    "FAMILY",
    "MemoryCandidate",
    "extract",
    "from_model_answer",
    "implication",
    "key_of",
    "kin_of",
    "label",
    "merge",
    "names_someone",
    "said_of_kin",
    "slug",
    "with_kin_named",
]

CATEGORIES = ("profile", "preferences", "entities", "events", "cases", "patterns")
CONTENT_MAX_CHARS = 500
ANY_CASE = re.IGNORECASE


@dataclass
class MemoryCandidate:
    category: str
    key: str
    content: str
    turns: list[int] = field(default_factory=list)  # indexes of the turns it came from


# --- reading a turn --------------------------------------------------------------------------------------
# How people type, written the way the patterns read it.
_CASUAL = (
    (re.compile(r"[\u2018\u2019\u02bc`]"), "'"),
    (re.compile(r"[\u201c\u201d]"), '"'),
    (re.compile(r"\bi\b"), "I"),
    (re.compile(r"\b(?:i'?m|im)\b", ANY_CASE), "I'm"),
    (re.compile(r"\bi'?ve\b", ANY_CASE), "I've"),
    (re.compile(r"\bi'd\b", ANY_CASE), "I'd"),
    (re.compile(r"\bi'll\b", ANY_CASE), "I'll"),
    (re.compile(r"\b(do|does|did|is|are|was|were|have|has|had|could|should|would)nt\b", ANY_CASE), r"\1n't"),
    (re.compile(r"\bcant\b", ANY_CASE), "can't"),
    (re.compile(r"\bgonna\b", ANY_CASE), "going to"),
    (re.compile(r"\bwanna\b", ANY_CASE), "want to"),
    (re.compile(r"\bb'?days?\b", ANY_CASE), "birthday"),
    (re.compile(r"\bal+er?gic\b", ANY_CASE), "allergic"),
    (re.compile(r"\bal+er?g(y|ies)\b", ANY_CASE), r"allerg\1"),
    (re.compile(r"\bveg[ie]tarian\b", ANY_CASE), "vegetarian"),
    (re.compile(r"\s+&\s+"), " and "),
    (re.compile(r"\bw/\s*", ANY_CASE), "with "),
)
_LOWER_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[a-z])")
# An emoji ends what was said before it ("I'm Sofia 👋 can we do this in English?"); one that says a joke
# stays, for the joke to be seen (``_JOKE``).
_EMOJI = re.compile(r"\s*(?![\U0001F602\U0001F923\U0001F61C\U0001F643])[\u2600-\u27bf\U0001f300-\U0001faff]+")


def prepare(text: str) -> str:
    for pattern, replacement in _CASUAL:
        text = pattern.sub(replacement, text)
    return _EMOJI.sub(".", text)


def _sentences(text: str) -> list[str]:
    return [part for s in split_sentences(prepare(text)) for part in _LOWER_SENTENCE_END.split(s) if part.strip()]


_SUBJECT = r"(?:I(?!\s+(?:are|were)\b)(?:'m|'ve|'d|'ll)?|we(?:'re|'ve|'d)?|my|our)\b"
_CLAUSE_BREAK = re.compile(
    r"\s*;\s*|\s+[-\u2013\u2014]+\s+|:\s+(?!(?-i:[A-Z][a-z]+)(?:\s*,|\s+and\b))"
    rf"|,?\s+(?:and|but|so|because|cause|cos|though|although|while|whereas|plus|or)\s+(?:also\s+|then\s+|now\s+)?(?={_SUBJECT})"
    rf"|,\s+(?={_SUBJECT})|,\s+(?=(?:it's|it\s+is)\s+(?-i:[A-Z][a-z]))"
    r"|,\s+(?=(?:what|how|why|when|where|which|who|can\s+you|could\s+you|would\s+you|will\s+you|do\s+you|does|"
    r"is\s+it|are\s+there|any\s+(?:idea|tips|thoughts))\b)",
    ANY_CASE,
)
_FIRST_PERSON = re.compile(
    r"^\W*(?:(?:so|and|but|also|oh|well|btw|plus|then|honestly|actually|just|yes|yeah)\W+)*"
    r"(?:I|I'm|I've|I'd|I'll|we|we're|we've|my|our)\b",
    ANY_CASE,
)
_ABOUT_ME = re.compile(r"\b(?:about\s+me|intro|quick\s+profile|me\s+in\s+brief|my\s+details)\s*$", ANY_CASE)
_THEM = re.compile(r"\bI\s+(?:\w+\s+)?(?:love|like|adore|have|own|keep)\s+(?P<obj>[a-z]+s)\b", ANY_CASE)
_CANNOT_HAVE = re.compile(
    r"\bI\s+(?:can't|cannot|can\s+not|mustn't|must\s+not|shouldn't)\s+(?:take|eat|have|use|touch|drink)\s+(?:any\s+)?"
    r"(?P<obj>[a-z]+)\b",
    ANY_CASE,
)


def _pieces(text: str) -> list[tuple[int, str]]:
    """The clauses of a sentence, each with where it starts."""
    pieces, start = [], 0
    for match in _CLAUSE_BREAK.finditer(text):
        pieces.append((start, text[start : match.start()]))
        start = match.end()
    pieces.append((start, text[start:]))
    return [(at, piece) for at, piece in pieces if piece.strip(" ,.!?")]


def _clauses(text: str) -> list[tuple[int, facts.Clause]]:
    clauses: list[tuple[int, facts.Clause]] = []
    previous = ""
    for at, piece in _pieces(text):
        match = _THEM.search(previous) or _CANNOT_HAVE.search(previous) or _CANNOT_HAVE.search(piece)
        antecedent = match.group("obj") if match else ""
        if _ABOUT_ME.search(previous):
            clauses += [(at, facts.Clause(item.strip(" ."), listed=True)) for item in piece.split(",") if item.strip()]
        else:
            first = bool(_FIRST_PERSON.match(piece))
            clauses.append((at, facts.Clause(piece.strip(), first_person=first, antecedent=antecedent)))
        previous = piece
    return clauses


# --- what is not a statement about the user --------------------------------------------------------------
_CONDITIONAL = re.compile(
    r"^\W*(?:(?:so|and|but|ok|okay|well|hmm|also|just)\W+)*(?:if|suppose|supposing|imagine|hypothetically|"
    r"let's\s+say|lets\s+say|say|what\s+if|in\s+case|assuming|pretend|even\s+if|unless|were\s+I)\b",
    ANY_CASE,
)
_QUESTION_START = re.compile(
    r"^\W*(?:(?:so|and|but|ok|okay|hey|hi|also|btw|um|oh|quick\s+question)\W+)*(?:what|what's|how|why|when|where|"
    r"which|who|whose|whom|am\s+I|do\s+I|did\s+I|does|should\s+I|shall\s+I|could\s+I|can\s+I|would\s+I|will\s+I|"
    r"is\s+it|is\s+my|is\s+there|are\s+there|are\s+my|is\s+this|do\s+you|did\s+you|can\s+you|could\s+you|"
    r"would\s+you|will\s+you|have\s+you|any\s+idea|any\s+tips|is\s+that|are\s+you)\b",
    ANY_CASE,
)
# "may" is a month after a number or "in", and "wish me luck" wishes nothing.
_MONTH_MAY = r"(?<!\d)(?<!\d\s)(?<!th\s)(?<!st\s)(?<!nd\s)(?<!rd\s)(?<!in\s)(?<!of\s)(?<!by\s)(?<!til\s)"
_TENTATIVE = re.compile(
    rf"\b(?:might|{_MONTH_MAY}may(?!\s+\d)|maybe|perhaps|possibly|probably|someday|some\s+day|one\s+day|"
    r"wish(?!\s+me\b)|wished|could|should|"
    r"thinking\s+(?:of|about)|considering|hopefully|hoping\s+to|hope\s+to|not\s+sure|unsure|don't\s+think|"
    r"do\s+not\s+think|don't\s+know\s+if|doubt)\b|\b(?:would|'d)\s+(?!rather\b|prefer\b)\w+",
    ANY_CASE,
)
_REPORTED = re.compile(
    r"\b(?:said|says|saying|told|tells|tell\s+me|thinks|reckons|claims|claimed|mentioned|according\s+to|apparently|"
    r"believes|swears)\b",
    ANY_CASE,
)
_JOKE = re.compile(
    r"\b(?:lol|lmao|lmfao|rofl|ha(?:ha)+|he(?:he)+|jk|j/k|kidding|joking)\b|[\U0001F602\U0001F923\U0001F61C\U0001F643]|;\)|:P\b|xD\b",
    ANY_CASE,
)
_RETRACTED = re.compile(r"\b(?:no\s+longer|anymore|any\s+more|used\s+to|formerly|not\s+anymore|ex-)", ANY_CASE)


def _is_question(clause: str, last: bool, sentence: str) -> bool:
    return (
        clause.rstrip().endswith("?")
        or bool(_QUESTION_START.match(clause))
        or (last and sentence.rstrip().endswith("?"))
    )


def _is_reported(clause: str) -> bool:
    """Someone else's words ("my doctor said I might be ..."); the user's own ("I told him I'm vegan") are theirs."""
    for match in _REPORTED.finditer(clause):
        before = clause[: match.start()].split()[-2:]
        if "I" not in before:
            return True
    return False


def _without_jokes(text: str) -> str:
    """The sentence without the comma-separated parts said as a joke ("feeling old lol")."""
    if not _JOKE.search(text):
        return text
    return ",".join(part for part in text.split(",") if not _JOKE.search(part))


# --- explicit requests -----------------------------------------------------------------------------------
_REQUEST = re.compile(
    r"^\W*(?:(?:hi|hey|oh|also|and|btw|ok|okay|so|one\s+more\s+thing|just|quick\s+one)\W+)*"
    r"(?:please\s+|pls\s+|(?:can|could|would|will)\s+you\s+(?:please\s+)?)?"
    r"(?P<trigger>remember|don't\s+forget|do\s+not\s+forget|note\s+to\s+self|reminder\s+(?:for|to)\s+(?:myself|me|self)|"
    r"make\s+a\s+note|take\s+(?:a\s+)?note|"
    # "note" alone asks only when what follows is set apart or said of oneself ("Note: ...", "note that ...",
    # "please note I'm ..."): a note's label ("note 3 about the kettle", "Note 2 covers pricing") asks nothing.
    r"note\s+down|note(?=\s*(?:[:,\-\u2013]|$)|\s+(?:that|I|I'm|I've|I'd|my|we|we're|our|me)\b)|"
    r"keep\s+in\s+mind|bear\s+in\s+mind|for\s+future\s+reference|for\s+the\s+record|fyi|"
    r"for\s+your\s+information|just\s+so\s+you\s+know|remind\s+me|save\s+this|store\s+this)\b"
    r"(?:\s+(?:of|this|that|too|please|for\s+me|for\s+later|down))*\s*[:,\-\u2013]?\s*(?:that\s+)?",
    ANY_CASE,
)
_NOTHING_TO_NOTE = re.compile(
    r"^(?:this|that|it|everything|all\s+(?:of\s+)?this|what\s+I\s+(?:said|told\s+you)|for\s+me|me|"
    # the conversation itself ("remember this whole conversation"), which is no fact about the person
    r"(?:(?:this|the|our)\s+)?(?:(?:whole|entire)\s+)?(?:conversation|chat|discussion|session|thread))?\W*$",
    ANY_CASE,
)
_STATES = re.compile(r"\b(?:is|are|was|'s|have|has|'ve)\b", ANY_CASE)
_EXPLANATION = re.compile(r"^\W*(?:so|because|which|since|as|cause|cos)\b", ANY_CASE)


def _note(text: str, trigger: str) -> facts.Fact | None:
    """What the user asked to be remembered and no finder read, kept as a sentence about them."""
    text = text.strip(" ,:-\u2013")
    if _NOTHING_TO_NOTE.match(text) or len(text.split()) < 2:
        return None
    if re.match(r"remind\s+me\b", trigger, ANY_CASE):
        return facts.Fact("events", facts._plan_key(text), about_user(f"wants to be reminded {text}"))
    subject = re.match(
        r"^(?:my|our|the|a|an)\s+(?P<s>[\w' -]{2,40}?)\s*(?:\bis\b|\bare\b|\bwas\b|:|\bexpires\b|\brenews\b|"
        r"\bfinishes\b|\bstarts\b|\bends\b|\bchanged\b|\bopens\b|\bcloses\b)",
        text,
        ANY_CASE,
    )
    key = slug(subject.group("s")) if subject else facts._plan_key(text)
    if re.search(facts.WHEN, text, ANY_CASE) or re.search(facts.FUTURE, text, ANY_CASE):
        category = "events"
    elif re.match(r"^(?:I|we)\s+(?!(?:am|'m|have|'ve|was|had)\b)(?:\w+ly\s+)?[a-z]+", text, ANY_CASE):
        category = "patterns"
    elif re.match(r"^(?:my|our|the|a|an)\b|^(?-i:[A-Z][a-z]+)", text, ANY_CASE):
        category = "entities"
    else:
        category = "profile"
    return facts.Fact(category, key, about_user(text))


@dataclass(frozen=True)
class _Request:
    index: int  # the clause it starts in
    trigger: str
    remainder: str  # what follows the trigger in that clause
    text: str  # what follows the trigger to the end of the sentence


def _request(sentence: str, clauses: list[tuple[int, facts.Clause]]) -> _Request | None:
    for index, (at, clause) in enumerate(clauses):
        if match := _REQUEST.match(clause.text):
            rest = clause.text[match.end() :]
            return _Request(index, match.group("trigger"), rest, sentence[at + match.end() :])
    return None


# --- the facts of a turn ---------------------------------------------------------------------------------
def _facts_of(clause: facts.Clause) -> list[facts.Fact]:
    found = [fact for finder in facts.FINDERS for fact in finder(clause)]
    if _RETRACTED.search(clause.text):
        found = [fact for fact in found if fact.content.startswith("No longer")]
    strong = [fact for fact in found if not fact.weak]
    kept: dict[str, facts.Fact] = {}
    for fact in strong or found:  # two finders reading one statement the same way keep the first
        kept.setdefault(fact.content, fact)
    return list(kept.values())


def _sentence_facts(sentence: str) -> list[facts.Fact]:
    if _CONDITIONAL.match(sentence):
        return []
    sentence = _without_jokes(sentence)
    clauses = _clauses(sentence)
    request = _request(sentence, clauses)
    kept: list[facts.Fact] = []
    requested_found: list[tuple[facts.Clause, list[facts.Fact]]] = []
    for index, (_, clause) in enumerate(clauses):
        requested = request is not None and index >= request.index
        if requested and index == request.index:
            rest = request.remainder
            clause = facts.Clause(rest, first_person=bool(_FIRST_PERSON.match(rest)), antecedent=clause.antecedent)
        if not clause.text.strip(" ,.!?"):
            continue
        if not requested and (
            _is_question(clause.text, index == len(clauses) - 1, sentence)
            or _is_reported(clause.text)
            or _TENTATIVE.search(clause.text)
        ):
            continue
        found = _facts_of(clause)
        kept += found
        if requested:
            requested_found.append((clause, found))
    if request is not None:
        kept += _notes(request, requested_found)
    return kept


def _notes(request: _Request, read: list[tuple[facts.Clause, list[facts.Fact]]]) -> list[facts.Fact]:
    """An explicit request is always kept: what no finder read becomes a note, the whole request when
    nothing in it was read, else each of its statements left over."""
    if not any(found for _, found in read):
        note = _note(request.text, request.trigger)
        return [note] if note else []
    notes = []
    for clause, found in read:
        statement = not found and not _EXPLANATION.match(clause.text) and len(clause.text.split()) >= 3
        if statement and _STATES.search(clause.text) and (note := _note(clause.text, "")):
            notes.append(note)
    return notes


_NAMED_LATER = re.compile(rf"^\W*(?:his|her|its|their)\s+name(?:'s|\s+is)\s+(?P<name>{facts.NAME})\b", ANY_CASE)


def _named(fact: facts.Fact, name: str) -> facts.Fact | None:
    """ "I just got a puppy! Her name is Olive." -> "Has a puppy, Olive.", kept under the puppy's name."""
    if fact.category != "entities" or not fact.content.startswith("Has a") or "," in fact.content:
        return None
    return facts.Fact("entities", f"{fact.key}_{slug(name)}", f"{fact.content[:-1]}, {name}.")


def _turn_facts(content: str) -> list[facts.Fact]:
    found: list[facts.Fact] = []
    for sentence in _sentences(content):
        if (match := _NAMED_LATER.match(sentence)) and found and (named := _named(found[-1], match.group("name"))):
            found[-1] = named
            continue
        found += _sentence_facts(sentence)
    return found


def extract(turns: Sequence[tuple[str, str]]) -> list[MemoryCandidate]:
    """Candidates from ``turns`` (role, content) in order; the caller removes injected text first."""
    found: list[MemoryCandidate] = []
    for index, (role, content) in enumerate(turns):
        if role != "user":
            continue
        for fact in _turn_facts(content):
            found.append(
                MemoryCandidate(
                    category=fact.category,
                    key=fact.key[:KEY_MAX_CHARS],
                    content=fact.content.strip()[:CONTENT_MAX_CHARS],
                    turns=[index],
                )
            )
    found += _cases(turns)
    return merge(found)


# --- people named before ---------------------------------------------------------------------------------
# A family member (or pet) as their memory names them: "Has a sister, Mei.", "Has an older brother, Ken."
# or "Their husband is Tom, who works as a pilot.".
_KIN_MEMORY = re.compile(
    rf"^(?:Has an? (?:[\w-]+ ){{0,3}}?(?P<had>{words.FAMILY_WORDS}), |Their (?P<single>{words.FAMILY_WORDS}) is )"
    r"(?P<name>[A-Z][\w'-]+)\b(?!\s+(?:and|&)\b)"
)
# A clause that opens with a name and goes on to say something of them: "Mei is vegetarian", "and Theo
# can't eat eggs". Said of someone the person named before, it is said of their sister or son.
_OPENS_WITH_NAME = re.compile(
    r"(?:^|(?<=[.!?;,])\s*|\b(?i:and|but|so|because|since|also)\s+)(?P<name>[A-Z][a-z][\w-]*)"
    r"(?=(?:['\u2019]s|\s+(?:is|was|has|had|can|can't|cannot|could|does|doesn't|did|didn't|will|won't|loves|"
    r"likes|hates|gets|takes|eats|works|lives|needs|wants|goes|just|also|still|never|always|only|really)\b))"
)
# "Tom is my boss.": who they are, said again, and maybe of someone else of that name.
_IS_MY = re.compile(r"\s*(?:is|['\u2019]s)\s+(?:my|our)\b", ANY_CASE)
# "Dr. Mei": a title, not the end of a sentence.
_TITLE_BEFORE = re.compile(r"\b(?:Dr|Mr|Mrs|Ms|Mx|St|Prof)\.\s*$")


def _names_opening(text: str) -> list[re.Match]:
    """The clauses of ``text`` that open with a name (not "What", "It" or "This") and say something of them."""
    return [
        match
        for match in _OPENS_WITH_NAME.finditer(text)
        if match.group("name").lower() not in STOPWORDS and not _TITLE_BEFORE.search(text, 0, match.start("name"))
    ]


def names_someone(text: str) -> bool:
    """Whether a clause of ``text`` opens with a name and says something of them: worth asking who they are."""
    return bool(_names_opening(text))


def kin_of(memories: Sequence[tuple[str, str]]) -> dict[str, str]:
    """The names of the person's family and pets, each with the relation it is stored under ("Mei":
    "sister"), from their memories (category, content)."""
    kin: dict[str, str] = {}
    for category, content in memories:
        if category == "entities" and (match := _KIN_MEMORY.match(content)):
            kin.setdefault(match.group("name"), (match.group("had") or match.group("single")).lower())
    return kin


def with_kin_named(text: str, kin: dict[str, str]) -> str:
    """``text`` with each clause that opens with the name of someone the person named before said as they
    first said it: "Mei is vegetarian." -> "my sister Mei is vegetarian.", so that the patterns read it.
    "Tom is my boss." is left as it is: who Tom is, said of him again or of another Tom."""
    if not kin:
        return text
    read, last = [], 0
    for match in _names_opening(text):
        name = match.group("name")
        if name not in kin or _IS_MY.match(text, match.end("name")):
            continue
        read += [text[last : match.start("name")], f"my {kin[name]} {name}"]
        last = match.end("name")
    return "".join([*read, text[last:]])


def said_of_kin(said: Sequence[MemoryCandidate], reread: Sequence[MemoryCandidate], kin: dict[str, str]) -> list:
    """What the person's words say (``said``), and of what reading them with the names of their family
    (``with_kin_named``) finds too, only those relatives' own facts ("Their sister Mei is vegetarian."):
    who the relative is is known already, and "Mei is at work" is no description of her to keep."""
    theirs = tuple(f"{words.RELATION_KEYS.get(relation, relation)}_{slug(name)}_" for name, relation in kin.items())
    known = {(candidate.category, candidate.key) for candidate in said}
    added = [
        candidate
        for candidate in reread
        if candidate.category == "entities"
        and candidate.key.startswith(theirs)
        and (candidate.category, candidate.key) not in known
    ]
    return [*said, *added]


# --- cases -----------------------------------------------------------------------------------------------
_PROBLEM = re.compile(
    r"\b(error|exception|traceback|fails?|failing|failed|doesn't work|does not work|isn't working|not working|"
    r"broken|crash(?:es|ed|ing)?|bug|timeout|times out|timed out|stuck|hangs?|freezes?|"
    r"(?:can't|cannot|can not|won't|unable to) (?:connect|log ?in|sign in|install|start|open|access|find|load|run|"
    r"save|upload|download|build|compile|boot|deploy|import|export|print|send|sync|update))\b",
    ANY_CASE,
)
_SOLUTION = re.compile(
    r"\b(try|run|set|use|install|upgrade|downgrade|restart|reboot|fix|solution|you can|you should|you need to|"
    r"change|add|remove|enable|disable|configure|update|replace|increase|decrease|raise|lower|split|switch|"
    r"move|rename|delete|clear|check|make sure|instead|pin|roll back|revert|reset|allocate|limit)\b",
    ANY_CASE,
)


def _cases(turns: Sequence[tuple[str, str]]) -> list[MemoryCandidate]:
    """A case: a problem the user reported, and the assistant's next answer that proposes a fix."""
    cases = []
    for index, (role, content) in enumerate(turns):
        if role != "user" or not _PROBLEM.search(content):
            continue
        problem = next((s for s in split_sentences(content) if _PROBLEM.search(s)), "")
        reply = next(((i, c) for i, (r, c) in enumerate(turns) if i > index and r == "assistant"), None)
        if not problem or reply is None:
            continue
        solution = next((s for s in split_sentences(reply[1]) if _SOLUTION.search(s)), "")
        if solution:
            content = f"Problem: {problem} Solution: {solution}"[:CONTENT_MAX_CHARS]
            cases.append(MemoryCandidate("cases", slug(problem, words=5), content, [index, reply[0]]))
    return cases


def merge(candidates: Sequence[MemoryCandidate]) -> list[MemoryCandidate]:
    """One candidate per (category, key): the latest statement wins, every source turn is kept."""
    merged: dict[tuple[str, str], MemoryCandidate] = {}
    for candidate in candidates:
        slot = (candidate.category, candidate.key)
        if slot in merged:
            earlier = merged[slot]
            turns = sorted(set(earlier.turns) | set(candidate.turns))
            latest = candidate if max(candidate.turns) >= max(earlier.turns) else earlier
            merged[slot] = MemoryCandidate(latest.category, latest.key, latest.content, turns)
        else:
            merged[slot] = MemoryCandidate(candidate.category, candidate.key, candidate.content, list(candidate.turns))
    return list(merged.values())


# --- a model's answer ------------------------------------------------------------------------------------
# What models call the categories when they do not use their names.
_CATEGORY_NAMES = {
    **{name: name for name in CATEGORIES},
    **dict.fromkeys(("preference", "diet", "likes", "dislikes", "instructions", "style"), "preferences"),
    **dict.fromkeys(("entity", "family", "people", "person", "relationships", "pets", "contacts"), "entities"),
    **dict.fromkeys(("event", "dates", "date", "plans", "plan", "schedule", "appointments"), "events"),
    **dict.fromkeys(("case", "problem", "problems", "solutions", "fix", "fixes"), "cases"),
    **dict.fromkeys(("pattern", "habit", "habits", "routine", "routines"), "patterns"),
    **dict.fromkeys(("identity", "health", "work", "job", "places", "location", "personal", "bio", "fact"), "profile"),
}
_LIST_NAMES = ("memories", "items", "facts", "results", "data", "memory")
_JSON_STARTS_TRIED = 20


def _json_in(text: str) -> Any:
    """The first JSON value in a model's answer: in a code fence, or with prose around it."""
    fence = re.search(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)
    decoder = json.JSONDecoder()
    for chunk in ([fence.group(1)] if fence else []) + [text]:
        starts = [i for i, char in enumerate(chunk) if char in "[{"][:_JSON_STARTS_TRIED]
        for start in starts:
            try:
                return decoder.raw_decode(chunk[start:])[0]
            except ValueError:
                continue
    raise ValueError("no JSON in the answer")


def _items(data: Any) -> list:
    if isinstance(data, list):
        return data
    if isinstance(data, dict):
        for name in _LIST_NAMES:
            if isinstance(data.get(name), list):
                return data[name]
        lists = [value for value in data.values() if isinstance(value, list)]
        if lists:
            return lists[0]
        if "content" in data:
            return [data]
    raise ValueError("the answer holds no list of memories")


def key_of(text: str) -> str:
    """A key as a person or a model wrote it, in the form keys take: "Peanut Allergy" -> "peanut_allergy"."""
    return re.sub(r"[^a-z0-9]+", "_", text.lower()).strip("_")[:KEY_MAX_CHARS]


def _shortened(content: str) -> str:
    """A text cut to CONTENT_MAX_CHARS: at its last full sentence that fits, else at a word."""
    if len(content) <= CONTENT_MAX_CHARS:
        return content
    cut = content[:CONTENT_MAX_CHARS]
    end = max(cut.rfind(". "), cut.rfind("! "), cut.rfind("? "))
    if end > CONTENT_MAX_CHARS // 2:
        return cut[: end + 1]
    return cut.rsplit(" ", 1)[0].rstrip(" ,;:") + "\u2026"


def _turns_of(value: Any, turn_count: int) -> list[int]:
    values = value if isinstance(value, list) else [value]
    turns = sorted({v for v in values if isinstance(v, int) and not isinstance(v, bool) and 0 <= v < turn_count})
    return turns or list(range(turn_count))


def from_model_answer(
    answer: str, *, turn_count: int, known_keys: Sequence[tuple[str, str]] = ()
) -> list[MemoryCandidate]:
    """The memories in a model's answer. Items that cannot be used (no text, a category that is none of
    ours) are left out; raises ValueError when the answer is not a list of memories at all, or when it
    lists some and none of them is usable, so that the caller falls back to the patterns."""
    items = _items(_json_in(answer))
    known = {key for _, key in known_keys}
    found = []
    for item in items:
        if not isinstance(item, dict):
            continue
        category = _CATEGORY_NAMES.get(str(item.get("category", "")).strip().lower())
        text = next(
            (item[name] for name in ("content", "memory", "text", "fact") if isinstance(item.get(name), str)), ""
        )
        content = _shortened(" ".join(text.split()))
        if not category or not content:
            continue
        raw_key = str(item.get("key") or "").strip()
        key = raw_key if raw_key in known else (key_of(raw_key) or slug(content))
        found.append(
            MemoryCandidate(category, key, content, _turns_of(item.get("turn", item.get("turns")), turn_count))
        )
    if items and not found:
        raise ValueError("none of the memories in the answer is usable")
    return merge(found)
