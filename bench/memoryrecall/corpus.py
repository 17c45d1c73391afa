"""Reads the memory retrieval set in ``data/`` and checks its labels. Every function returns fresh copies."""

from __future__ import annotations

import copy
import json
from functools import cache
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
PARTS = ("tuning", "heldout")
KINDS = ("direct", "paraphrase", "implied", "multi", "about_me", "other_person", "none")
MIN_QUESTIONS = 40


@cache
def _load(part: str) -> tuple[dict, ...]:
    return tuple(json.loads((DATA / f"{part}.json").read_text(encoding="utf-8")))


def people(part: str | None = None) -> list[dict]:
    """``{"part", "person", "sessions": [[turn, ...], ...], "questions": [{"id", "kind", "text", "relevant":
    [{"key", "content"}]}]}``; every part when ``part`` is None."""
    parts = PARTS if part is None else (part,)
    return [{"part": name, **copy.deepcopy(row)} for name in parts for row in _load(name)]


def matches(label: dict, *, key: str, content: str) -> bool:
    """Whether a stored memory (its ``key`` and ``content``) is the fact ``label`` names: every word of
    the label's key in the memory's key, every word of its content in the memory's text, ignoring case."""
    key, content = key.lower(), content.lower()
    return all(word in key for word in label["key"].lower().split()) and all(
        word in content for word in label["content"].lower().split()
    )


def check() -> list[str]:
    """Every inconsistency found: duplicate ids, unknown kinds, a ``none`` question with facts or another
    without, a label with no content word, a fact no turn states, too few questions. Empty when all is well."""
    errors: list[str] = []
    seen: set[str] = set()
    for part in PARTS:
        questions = 0
        for person in people(part):
            said = " ".join(turn for session in person["sessions"] for turn in session).lower()
            for question in person["questions"]:
                where = f"{part}/{question.get('id')}"
                questions += 1
                if question.get("id") in seen:
                    errors.append(f"{where}: duplicate id")
                seen.add(question.get("id"))
                if question["kind"] not in KINDS:
                    errors.append(f"{where}: unknown kind {question['kind']!r}")
                if (question["kind"] == "none") == bool(question["relevant"]):
                    errors.append(f"{where}: a question is either of kind none or names the facts that answer it")
                for label in question["relevant"]:
                    words = label["content"].lower().split()
                    if not words:
                        errors.append(f"{where}: a label without content words")
                    missing = [word for word in words if word not in said]
                    if missing:
                        errors.append(f"{where}: {missing} never said by {person['person']}")
        if questions < MIN_QUESTIONS:
            errors.append(f"{part}: only {questions} questions (at least {MIN_QUESTIONS})")
    return errors
