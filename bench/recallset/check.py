"""Validates the recall set and prints its size, how much the questions share with their evidence, and a fingerprint.

    .venv/bin/python bench/recallset/check.py [--worst 15]

Wording overlap is the share of a question's content words (stop words, numbers and capitalised names removed,
suffixes stripped) that also appear in its evidence turns: a question that copies its evidence scores 1, a true
paraphrase 0. Names are left out because a user asking about "Pickle" will say "Pickle".
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.evalset.overlap import content_stems  # noqa: E402
from bench.recallset import corpus  # noqa: E402


def wording_overlap(question: str, evidence_texts: list[str]) -> float:
    names = {w.lower() for w in re.findall(r"\b[A-Z]\w+", question)}
    words = content_stems(question) - content_stems(" ".join(names))
    if not words:
        return 0.0
    return len(words & content_stems(" ".join(evidence_texts))) / len(words)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--worst", type=int, default=0, help="list the questions that share most wording")
    args = parser.parse_args()

    errors = corpus.check()
    for error in errors:
        print("ERROR", error)
    convs = corpus.conversations()
    questions = corpus.questions()
    by_id = {c["id"]: c for c in convs}
    sessions = [len(c["sessions"]) for c in convs]
    turns = [len(s["turns"]) for c in convs for s in c["sessions"]]
    months = [round((_date(c["sessions"][-1]) - _date(c["sessions"][0])).days / 30.4, 1) for c in convs]
    print(
        f"conversations {len(convs)}; sessions {sum(sessions)} ({min(sessions)}-{max(sessions)} each); "
        f"turns {sum(turns)} ({min(turns)}-{max(turns)} a session); months spanned {min(months)}-{max(months)}"
    )
    kinds = Counter(q["kind"] for q in questions)
    print(f"questions {len(questions)}: " + ", ".join(f"{k} {kinds[k]}" for k in corpus.KINDS))

    scored = []
    for q in questions:
        if not q["evidence"]:
            continue
        texts = [by_id[q["conversation"]]["sessions"][s]["turns"][t]["text"] for s, t in q["evidence"]]
        scored.append((wording_overlap(q["question"], texts), q, texts))
    for kind in corpus.KINDS[:-1]:
        values = [o for o, q, _ in scored if q["kind"] == kind]
        spans = [len({s for s, _ in q["evidence"]}) for _, q, _ in scored if q["kind"] == kind]
        print(
            f"  {kind:<10} wording overlap mean {statistics.mean(values):.2f}, "
            f"{sum(v >= 0.5 for v in values)} of {len(values)} share half or more; "
            f"evidence sessions per question {statistics.mean(spans):.1f}"
        )
    for overlap, q, texts in sorted(scored, key=lambda x: -x[0])[: args.worst]:
        print(f"{overlap:.2f} {q['id']} {q['question']}\n       " + "\n       ".join(texts))
    print("fingerprint", corpus.fingerprint())
    return 1 if errors else 0


def _date(session: dict):
    import datetime as dt

    return dt.datetime.fromisoformat(session["date"])


if __name__ == "__main__":
    sys.exit(main())
