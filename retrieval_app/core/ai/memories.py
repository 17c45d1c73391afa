"""Long-term memory extraction by patterns: what the user says about themselves, their preferences,
the people and things in their life, dated events, solved problems and habits.

Only the user's own words yield profile, preference, entity, event and pattern memories; a case pairs
a problem the user reported with the assistant's answer to it. Every candidate has a stable key, so a
later statement on the same subject ("I now live in Lyon") updates the earlier memory instead of
adding a second one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from retrieval_app.core.ai.extractive import _DATE, STOPWORDS, split_sentences, stem, terms_of

CATEGORIES = ("profile", "preferences", "entities", "events", "cases", "patterns")


@dataclass
class MemoryCandidate:
    category: str
    key: str
    content: str
    turns: list[int] = field(default_factory=list)  # indexes of the turns it came from


def slug(text: str, *, words: int = 4) -> str:
    parts = [stem(w) for w in re.findall(r"[A-Za-z0-9]+", text) if w.lower() not in STOPWORDS]
    return "_".join(parts[:words]).lower() or "item"


def _clean(value: str) -> str:
    return value.strip().strip(" .,!?;:\"'").strip()


def _third_person(value: str) -> str:
    """ "my coffee black" -> "their coffee black": a memory speaks of the user, not as the user."""
    replacements = {
        "my": "their",
        "me": "them",
        "mine": "theirs",
        "myself": "themselves",
        "i": "they",
        "i'm": "they're",
        "i've": "they've",
    }
    return re.sub(
        r"\b(?:my|me|mine|myself|i|i'm|i've)\b", lambda m: replacements[m.group(0).lower()], value, flags=re.IGNORECASE
    )


def _a_name(value: str) -> bool:
    return bool(value) and not _NOT_A_NAME.match(value.split()[0] if " " in value else value)


# Lower-case words match in any case ((?i:...)); names must start with a capital letter.
_NAME = re.compile(r"\b(?i:my name is|call me|i am called|i'm called)\s+([A-Z][\w'-]+(?:\s+[A-Z][\w'-]+){0,2})")
_PROFESSIONS = (
    "engineer|developer|programmer|teacher|professor|doctor|nurse|manager|designer|student|scientist|lawyer|"
    "writer|researcher|analyst|consultant|accountant|architect|artist|founder|ceo|cto|product manager|"
    "data scientist|journalist|editor|pharmacist|chef|photographer|marketer|recruiter|lecturer|physician|"
    "dentist|therapist|economist|entrepreneur|freelancer|administrator|technician|mechanic|electrician"
)
_OCCUPATION = re.compile(
    rf"\bi(?:'m| am)\s+(?:a|an)\s+((?:[\w-]+\s+){{0,3}}?(?:{_PROFESSIONS}))s?\b"
    r"|\bi work as (?:a|an)\s+([\w -]{3,40}?)(?=[.,!?;]|$| at | for | in )",
    re.IGNORECASE,
)
_EMPLOYER = re.compile(
    r"\b(?i:i (?:work|am working)(?: as (?:a|an) [\w -]{3,40}?)? (?:at|for))\s+"
    r"([A-Z][\w&.'-]*(?:\s+[A-Z][\w&.'-]*){0,3})"
)
_LOCATION = re.compile(
    r"\b(?i:i(?:'m| am)?\s*(?:now\s+|currently\s+|still\s+)?(?:live|living|based|located)\s+in"
    r"|i(?:'ve| have)?\s*(?:just\s+|recently\s+|now\s+)?(?:moved|relocated)\s+to)"
    r"\s+((?:the\s+)?[A-Z][\w'-]*(?:[\s,]+[A-Z][\w'-]*){0,3})"
)
_ORIGIN = re.compile(r"\b(?i:i(?:'m| am) from)\s+((?:the\s+)?[A-Z][\w'-]*(?:[\s,]+[A-Z][\w'-]*){0,3})")
# Words that are capitalised but are no name, place or employer ("I work at Night", "call me Tomorrow").
_NOT_A_NAME = re.compile(
    rf"^(?:{_DATE.pattern}|night|nights|home|weekends?|noon|midnight|christmas|easter|python|java|rust|go|"
    r"javascript|english|french|german|spanish|sick|busy|tired|fine|ok|okay|happy|sad|late|early|ready|back)$",
    re.IGNORECASE,
)
# "no longer", "not", "used to", "quit": a statement that something is not (or no longer) so.
_NEGATED = re.compile(r"\b(?:no longer|not|never|n't|used to|quit|left|anymore|any more|formerly)\b", re.IGNORECASE)
_LANGUAGE = re.compile(r"\b(?i:i speak)\s+([A-Z][a-z]+(?:(?:,\s*|\s+and\s+)[A-Z][a-z]+)*)")

_PREFERENCE = re.compile(
    r"\bi\s+(?:(?:now|actually|also|still|really|much|strongly)\s+){0,2}"
    r"(prefer|like|love|enjoy|hate|dislike|can't stand|don't like|do not like|"
    r"don't want|do not want|would rather|'d rather)\s+(.{2,120}?)(?=[.!?;]|,\s*(?:but|and|so)\b|$)",
    re.IGNORECASE,
)
_ALWAYS_NEVER = re.compile(r"\bplease\s+(always|never)\s+(.{3,120}?)(?=[.!?;]|$)", re.IGNORECASE)
_VERB_THIRD = {
    "prefer": "Prefers",
    "like": "Likes",
    "love": "Loves",
    "enjoy": "Enjoys",
    "hate": "Dislikes",
    "dislike": "Dislikes",
    "can't stand": "Dislikes",
    "don't like": "Dislikes",
    "do not like": "Dislikes",
    "don't want": "Does not want",
    "do not want": "Does not want",
    "would rather": "Would rather",
    "'d rather": "Would rather",
}

_RELATIONS = (
    "wife|husband|partner|girlfriend|boyfriend|son|daughter|mother|father|mom|dad|brother|sister|manager|boss|"
    "colleague|coworker|co-worker|friend|dog|cat|team lead|assistant|doctor|company|team|project|startup|client|"
    "landlord|cofounder|co-founder|mentor|teammate"
)
_MY_RELATION = re.compile(
    rf"\b(?i:my\s+({_RELATIONS})(?:'s name)?\s+(?:is|'s)\s+(?:called\s+|named\s+)?)"
    r"([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*){0,2})"
)
_RELATION_IS_MY = re.compile(rf"\b([A-Z][\w'-]*(?:\s+[A-Z][\w'-]*){{0,2}})\s+(?i:is\s+my\s+({_RELATIONS}))\b")
_WE_USE = re.compile(
    r"\b(?i:(?:we|i)\s+(?:use|are using|am using|run|deploy on|host on))\s+"
    r"([A-Z][\w.+#-]*(?:\s+[A-Z0-9][\w.+#-]*){0,2})"
)

_EVENT_NOUN = re.compile(
    r"\b(meeting|appointment|deadline|interview|flight|trip|launch|release|demo|call|birthday|wedding|exam|"
    r"conference|presentation|review|vacation|holiday|surgery|due date|move|party|dinner|lunch)\b",
    re.IGNORECASE,
)
_PROBLEM = re.compile(
    r"\b(error|exception|traceback|fails?|failing|failed|doesn't work|does not work|isn't working|not working|"
    r"broken|crash(?:es|ed|ing)?|bug|timeout|times out|timed out|stuck|hangs?|freezes?|"
    r"(?:can't|cannot|can not|won't|unable to) (?:connect|log ?in|sign in|install|start|open|access|find|load|run|"
    r"save|upload|download|build|compile|boot|deploy|import|export|print|send|sync|update))\b",
    re.IGNORECASE,
)
_SOLUTION = re.compile(
    r"\b(try|run|set|use|install|upgrade|downgrade|restart|reboot|fix|solution|you can|you should|you need to|"
    r"change|add|remove|enable|disable|configure|update|replace|increase|decrease|raise|lower|split|switch|"
    r"move|rename|delete|clear|check|make sure|instead|pin|roll back|revert|reset|allocate|limit)\b",
    re.IGNORECASE,
)
_HABIT = re.compile(
    r"\bi\s+(usually|always|often|normally|typically|tend to|regularly|"
    r"every (?:day|morning|evening|night|week|weekend|month))\s+"
    r"(.{3,120}?)(?=[.!?;]|$)",
    re.IGNORECASE,
)


def extract(turns: Sequence[tuple[str, str]]) -> list[MemoryCandidate]:
    """Candidates from ``turns`` (role, content) in order; the caller removes injected text first."""
    found: list[MemoryCandidate] = []

    def add(category: str, key: str, content: str, turn: int) -> None:
        found.append(MemoryCandidate(category=category, key=key[:255], content=content.strip(), turns=[turn]))

    for index, (role, content) in enumerate(turns):
        if role != "user":
            continue
        for sentence in split_sentences(content):
            negated = bool(_NEGATED.search(sentence))
            if (match := _NAME.search(sentence)) and _a_name(_clean(match.group(1))):
                add("profile", "name", f"Name: {_clean(match.group(1))}", index)
            if not negated and (match := _OCCUPATION.search(sentence)):
                add("profile", "occupation", f"Occupation: {_clean(match.group(1) or match.group(2))}", index)
            if not negated and (match := _EMPLOYER.search(sentence)) and _a_name(_clean(match.group(1))):
                add("profile", "employer", f"Works at {_clean(match.group(1))}", index)
            if not negated and (match := _LOCATION.search(sentence)) and _a_name(_clean(match.group(1))):
                add("profile", "location", f"Lives in {_clean(match.group(1))}", index)
            if (match := _ORIGIN.search(sentence)) and _a_name(_clean(match.group(1))):
                add("profile", "origin", f"Is from {_clean(match.group(1))}", index)
            if not negated and (match := _LANGUAGE.search(sentence)):
                add("profile", "languages", f"Speaks {_clean(match.group(1))}", index)
            for match in _PREFERENCE.finditer(sentence):
                verb, obj = match.group(1).lower(), _clean(match.group(2))
                if len(terms_of(obj)) == 0:
                    continue
                # "to get answers in French" is about answers in French; "tea over coffee" is about tea.
                subject = re.sub(r"^to\s+", "", obj, flags=re.IGNORECASE)
                subject = re.split(r"\b(?:over|than|instead of|rather than)\b", subject, maxsplit=1)[0]
                add("preferences", slug(subject), f"{_VERB_THIRD.get(verb, verb.title())} {_third_person(obj)}", index)
            if match := _ALWAYS_NEVER.search(sentence):
                add(
                    "preferences",
                    f"{match.group(1).lower()}_{slug(match.group(2))}",
                    f"Asks to {match.group(1).lower()} {_clean(match.group(2))}",
                    index,
                )
            for match in _MY_RELATION.finditer(sentence):
                relation, name = match.group(1).lower(), _clean(match.group(2))
                if _a_name(name):
                    add("entities", slug(relation), f"{relation.title()}: {name}", index)
            for match in _RELATION_IS_MY.finditer(sentence):
                name, relation = _clean(match.group(1)), match.group(2).lower()
                if name.lower() not in STOPWORDS and _a_name(name):
                    add("entities", slug(relation), f"{relation.title()}: {name}", index)
            if match := _WE_USE.search(sentence):
                tool = _clean(match.group(1))
                add("entities", f"tool_{slug(tool)}", f"Uses {tool} ({sentence.strip()})", index)
            if (event := _EVENT_NOUN.search(sentence)) and (date := _DATE.search(sentence)):
                add("events", f"{slug(event.group(1))}_{slug(date.group(0))}", sentence, index)
            if match := _HABIT.search(sentence):
                habit = _clean(match.group(2))
                add("patterns", slug(habit), f"{match.group(1).capitalize()} {_third_person(habit)}", index)

    # A case: a problem the user reported, and the assistant's next answer that proposes a fix.
    for index, (role, content) in enumerate(turns):
        if role != "user" or not _PROBLEM.search(content):
            continue
        problem = next((s for s in split_sentences(content) if _PROBLEM.search(s)), "")
        reply = next(((i, c) for i, (r, c) in enumerate(turns) if i > index and r == "assistant"), None)
        if not problem or reply is None:
            continue
        solution = next((s for s in split_sentences(reply[1]) if _SOLUTION.search(s)), "")
        if solution:
            add("cases", slug(problem, words=5), f"Problem: {problem} Solution: {solution}", index)
            found[-1].turns.append(reply[0])
    return merge(found)


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
