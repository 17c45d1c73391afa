"""Reads the dialogue set in ``data/``, checks its labels and measures how much its questions share with their
evidence. Every function returns fresh copies."""

from __future__ import annotations

import datetime as dt
import itertools
import re
import statistics
from collections.abc import Iterable
from functools import cache
from pathlib import Path

from bench import conversation_files
from bench.evalset.overlap import content_stems

DATA = Path(__file__).resolve().parent / "data"
KINDS = ("single", "multi_hop", "temporal", "open", "absent")
SESSIONS_PER_CONVERSATION = (16, 24)
TURNS_PER_SESSION = (14, 30)
QUESTION_ID = re.compile(r"^(?P<conversation>[a-z]+(?:_[a-z]+)+)-q\d{3}$")
# A question "overlaps" its evidence when at least this share of its content words appear in the evidence.
HALF = 0.5
CAPITALISED = re.compile(r"\b[A-Z]\w+")


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
    """Every inconsistency found (see ``check_conversations``); empty when all is well."""
    return check_conversations(_load())


def check_conversations(loaded: Iterable[dict]) -> list[str]:
    """Turns that do not alternate or are empty, sessions out of order, too few or too short, question ids
    that are repeated or not ``<conversation>-qNNN``, unknown kinds, evidence outside the sessions, absent
    questions with evidence and answerable ones without, and questions that name neither speaker."""
    errors: list[str] = []
    ids: set[str] = set()
    conversation_ids: set[str] = set()
    for conv in loaded:
        cid = conv["id"]
        if cid in conversation_ids:
            errors.append(f"{cid}: two conversations have this id")
        conversation_ids.add(cid)
        speakers = conv["speakers"]
        if len(speakers) != 2 or len(set(speakers)) != 2:
            errors.append(f"{cid}: needs two distinct speakers, has {speakers}")
        errors += _session_errors(cid, speakers, conv["sessions"])
        for q in conv["questions"]:
            if q["id"] in ids:
                errors.append(f"{cid}/{q['id']}: duplicate id")
            ids.add(q["id"])
            errors += _question_errors(conv, q)
    return errors


def _session_errors(cid: str, speakers: list[str], sessions: list[dict]) -> list[str]:
    errors: list[str] = []
    low, high = SESSIONS_PER_CONVERSATION
    if not low <= len(sessions) <= high:
        errors.append(f"{cid}: {len(sessions)} sessions, not {low}-{high}")
    dates = []
    for number, session in enumerate(sessions):
        if session["index"] != number:
            errors.append(f"{cid}: session {number} has index {session['index']}")
        try:
            dates.append(dt.datetime.fromisoformat(session["date"]))
        except ValueError:
            errors.append(f"{cid}: session {number} has a bad date {session['date']!r}")
        turns = session["turns"]
        if not TURNS_PER_SESSION[0] <= len(turns) <= TURNS_PER_SESSION[1]:
            errors.append(f"{cid}: session {number} has {len(turns)} turns, not {TURNS_PER_SESSION}")
        for i, turn in enumerate(turns):
            if turn["speaker"] not in speakers:
                errors.append(f"{cid}: session {number} turn {i} by unknown speaker {turn['speaker']!r}")
            if not turn["text"].strip():
                errors.append(f"{cid}: session {number} turn {i} is empty")
            if i and turn["speaker"] == turns[i - 1]["speaker"]:
                errors.append(f"{cid}: session {number} turn {i} does not alternate speakers")
    if any(later <= earlier for earlier, later in itertools.pairwise(dates)):
        errors.append(f"{cid}: sessions are not in strictly increasing date order")
    return errors


def _question_errors(conv: dict, q: dict) -> list[str]:
    where = f"{conv['id']}/{q['id']}"
    errors: list[str] = []
    matched = QUESTION_ID.match(q["id"])
    if not matched or matched["conversation"] != conv["id"]:
        errors.append(f"{where}: id is not {conv['id']}-qNNN")
    if q["kind"] not in KINDS:
        errors.append(f"{where}: unknown kind {q['kind']!r}")
    if not q["question"].strip() or not q["answer"].strip():
        errors.append(f"{where}: empty question or answer")
    if not any(re.search(rf"\b{re.escape(name)}\b", q["question"]) for name in conv["speakers"]):
        errors.append(f"{where}: names neither {' nor '.join(conv['speakers'])}")
    evidence = q["evidence"]
    if (q["kind"] == "absent") != (not evidence):
        errors.append(f"{where}: kind {q['kind']} with {len(evidence)} evidence turns")
    if q["kind"] == "multi_hop" and len(evidence) < 2:
        errors.append(f"{where}: multi_hop with fewer than two evidence turns")
    if len({tuple(e) for e in evidence}) != len(evidence):
        errors.append(f"{where}: repeated evidence")
    sessions = conv["sessions"]
    for pair in evidence:
        if len(pair) != 2 or not all(isinstance(x, int) for x in pair):
            errors.append(f"{where}: evidence {pair!r} is not [session, turn]")
        elif not (0 <= pair[0] < len(sessions) and 0 <= pair[1] < len(sessions[pair[0]]["turns"])):
            errors.append(f"{where}: evidence {pair!r} points outside the sessions")
    return errors


def wording_overlap(question: str, evidence_texts: list[str]) -> float:
    """The share of the question's content words (stop words, numbers and capitalised names left out, suffixes
    stripped) that also appear in its evidence: 1 when it copies its evidence, 0 for a true paraphrase. Names
    do not count: someone asking about "Mango" will say "Mango" whatever else they reword."""
    names = " ".join(CAPITALISED.findall(question)).lower()
    words = content_stems(question) - content_stems(names)
    if not words:
        return 0.0
    return len(words & content_stems(" ".join(evidence_texts))) / len(words)


def overlap_summary(conversation_list: list[dict], question_list: list[dict]) -> dict:
    """How much a set's answerable questions share with their evidence, overall and by kind: the number of
    questions, the mean overlap, and the shares sharing any content word and half or more of them."""
    by_id = {conv["id"]: conv for conv in conversation_list}
    scored: dict[str, list[float]] = {}
    for q in question_list:
        if not q["evidence"]:
            continue
        sessions = by_id[q["conversation"]]["sessions"]
        texts = [sessions[s]["turns"][t]["text"] for s, t in q["evidence"]]
        overlap = wording_overlap(q["question"], texts)
        scored.setdefault(q["kind"], []).append(overlap)
        scored.setdefault("all answerable", []).append(overlap)
    return {
        name: {
            "n": len(values),
            "mean": round(statistics.mean(values), 2),
            "any": round(sum(v > 0 for v in values) / len(values), 2),
            "half": round(sum(v >= HALF for v in values) / len(values), 2),
        }
        for name, values in scored.items()
    }
