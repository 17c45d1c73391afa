"""Reads the recall set in ``data/`` and checks its labels. Every function returns fresh copies."""

from __future__ import annotations

import datetime as dt
from functools import cache
from pathlib import Path

from bench import conversation_files

DATA = Path(__file__).resolve().parent / "data"
KINDS = ("single", "multi_hop", "temporal", "open", "absent")


@cache
def _load() -> tuple[dict, ...]:
    return conversation_files.load(DATA)


def conversations() -> list[dict]:
    return conversation_files.conversations(_load())


def questions(conversation_id: str | None = None) -> list[dict]:
    return conversation_files.questions(_load(), conversation_id)


def fingerprint() -> str:
    return conversation_files.fingerprint(_load())


def check() -> list[str]:
    """Every inconsistency found: unknown kinds, evidence outside the sessions, unanswerable questions with
    evidence, answerable ones without, sessions out of order or turns not alternating. Empty when all is well."""
    errors: list[str] = []
    ids: set[str] = set()
    for conv in _load():
        cid = conv["id"]
        speakers = conv["speakers"]
        if len(speakers) != 2 or len(set(speakers)) != 2:
            errors.append(f"{cid}: needs two distinct speakers, has {speakers}")
        sessions = conv["sessions"]
        dates = []
        for number, session in enumerate(sessions):
            if session["index"] != number:
                errors.append(f"{cid}: session {number} has index {session['index']}")
            try:
                dates.append(dt.datetime.fromisoformat(session["date"]))
            except ValueError:
                errors.append(f"{cid}: session {number} has a bad date {session['date']!r}")
            turns = session["turns"]
            for i, turn in enumerate(turns):
                if turn["speaker"] not in speakers:
                    errors.append(f"{cid}: session {number} turn {i} by unknown speaker {turn['speaker']!r}")
                if not turn["text"].strip():
                    errors.append(f"{cid}: session {number} turn {i} is empty")
                if i and turn["speaker"] == turns[i - 1]["speaker"]:
                    errors.append(f"{cid}: session {number} turn {i} does not alternate speakers")
        if dates != sorted(dates):
            errors.append(f"{cid}: sessions are not in date order")
        for q in conv["questions"]:
            where = f"{cid}/{q['id']}"
            if q["id"] in ids:
                errors.append(f"{where}: duplicate id")
            ids.add(q["id"])
            if q["kind"] not in KINDS:
                errors.append(f"{where}: unknown kind {q['kind']!r}")
            if not q["question"].strip() or not q["answer"].strip():
                errors.append(f"{where}: empty question or answer")
            evidence = q["evidence"]
            if (q["kind"] == "absent") != (not evidence):
                errors.append(f"{where}: kind {q['kind']} with {len(evidence)} evidence turns")
            if len({tuple(e) for e in evidence}) != len(evidence):
                errors.append(f"{where}: repeated evidence")
            for pair in evidence:
                if len(pair) != 2 or not all(isinstance(x, int) for x in pair):
                    errors.append(f"{where}: evidence {pair!r} is not [session, turn]")
                    continue
                s, t = pair
                if not (0 <= s < len(sessions) and 0 <= t < len(sessions[s]["turns"])):
                    errors.append(f"{where}: evidence {pair!r} points outside the sessions")
            if q["kind"] == "multi_hop" and len(evidence) < 2:
                errors.append(f"{where}: multi_hop with fewer than two evidence turns")
    return errors
