"""Reads the memory extraction set in ``data/`` and checks its labels. Every function returns fresh copies."""

from __future__ import annotations

import copy
import hashlib
import json
from functools import cache
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
PARTS = ("tuning", "heldout")
KINDS = (
    "identity",
    "health",
    "diet",
    "family",
    "work",
    "places",
    "dates",
    "plans",
    "preferences",
    "habits",
    "requests",
)
NEGATIVES = ("question", "joke", "hypothetical", "other_person", "reported", "negated", "chitchat")
CATEGORIES = ("profile", "preferences", "entities", "events", "cases", "patterns")
MIN_POSITIVES = 300
MIN_NEGATIVES = 100


@cache
def _load(part: str) -> tuple[dict, ...]:
    path = DATA / f"{part}.jsonl"
    return tuple(json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip())


def statements(part: str | None = None) -> list[dict]:
    """``{"id", "part", "text", "expect": [{"kind", "category", "key", "content"}], "negative"?}``; every part
    when ``part`` is None."""
    parts = PARTS if part is None else (part,)
    return [{"part": name, **copy.deepcopy(row)} for name in parts for row in _load(name)]


def kind_of(statement: dict) -> str:
    """The statement's own kind: its negative kind, else the kind of its first expected memory."""
    if statement.get("negative"):
        return f"negative:{statement['negative']}"
    return statement["expect"][0]["kind"]


def check() -> list[str]:
    """Every inconsistency found: duplicate ids, unknown kinds or categories, a negative with memories or a
    positive without, empty content words, too few statements. Empty when all is well."""
    errors: list[str] = []
    seen: set[str] = set()
    rows = statements()
    for row in rows:
        where = f"{row['part']}/{row.get('id')}"
        if row.get("id") in seen:
            errors.append(f"{where}: duplicate id")
        seen.add(row.get("id"))
        if not str(row.get("text", "")).strip():
            errors.append(f"{where}: empty text")
        negative = row.get("negative")
        if negative is not None and negative not in NEGATIVES:
            errors.append(f"{where}: unknown negative kind {negative!r}")
        if bool(negative) == bool(row["expect"]):
            errors.append(f"{where}: a statement is either negative or expects memories")
        for memory in row["expect"]:
            if memory["kind"] not in KINDS:
                errors.append(f"{where}: unknown kind {memory['kind']!r}")
            if not set(memory["category"].split("|")) <= set(CATEGORIES):
                errors.append(f"{where}: unknown category {memory['category']!r}")
            if not memory["content"].split():
                errors.append(f"{where}: no content words")
    positives = sum(1 for row in rows if row["expect"])
    if positives < MIN_POSITIVES:
        errors.append(f"only {positives} statements with memories (at least {MIN_POSITIVES})")
    if len(rows) - positives < MIN_NEGATIVES:
        errors.append(f"only {len(rows) - positives} negatives (at least {MIN_NEGATIVES})")
    for kind in KINDS:
        if not any(m["kind"] == kind for row in rows for m in row["expect"]):
            errors.append(f"no statement of kind {kind}")
    for kind in NEGATIVES:
        if not any(row.get("negative") == kind for row in rows):
            errors.append(f"no negative of kind {kind}")
    return errors


def fingerprint() -> str:
    """A hash of the whole set, so two runs can be shown to have used the same data."""
    return hashlib.sha256(json.dumps([_load(p) for p in PARTS], sort_keys=True).encode()).hexdigest()[:16]
