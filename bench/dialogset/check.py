"""Validates the dialogue set and prints its size, how much its questions share with their evidence (beside the
same figures for ``bench/recallset``), and a fingerprint.

    .venv/bin/python bench/dialogset/check.py [--worst 15]

Wording overlap is ``corpus.wording_overlap``: the share of a question's content words (stop words, numbers and
capitalised names removed, suffixes stripped) that also appear in its evidence turns. ``--worst`` lists the
questions that share the least with their evidence, the ones a lexical retriever will find hardest.
"""

from __future__ import annotations

import argparse
import datetime as dt
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.dialogset import corpus  # noqa: E402
from bench.recallset import corpus as recallset  # noqa: E402

DAYS_PER_MONTH = 30.4


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--worst", type=int, default=0, help="list the questions that share least wording")
    args = parser.parse_args()

    errors = corpus.check()
    for error in errors:
        print("ERROR", error)
    convs = corpus.conversations()
    questions = corpus.questions()
    sessions = [len(c["sessions"]) for c in convs]
    turns = [len(s["turns"]) for c in convs for s in c["sessions"]]
    months = [round(_span_days(c) / DAYS_PER_MONTH, 1) for c in convs]
    print(
        f"conversations {len(convs)}; sessions {sum(sessions)} ({min(sessions)}-{max(sessions)} each); "
        f"turns {sum(turns)} ({min(turns)}-{max(turns)} a session); months spanned {min(months)}-{max(months)}"
    )
    kinds = Counter(q["kind"] for q in questions)
    print(
        f"questions {len(questions)}: "
        + ", ".join(f"{k} {kinds[k]} ({kinds[k] / len(questions):.0%})" for k in corpus.KINDS)
    )

    print("wording overlap of answerable questions with their evidence (mean; share sharing any; half or more):")
    sets = {
        "dialogset": corpus.overlap_summary(convs, questions),
        "recallset": corpus.overlap_summary(recallset.conversations(), recallset.questions()),
    }
    for kind in (*corpus.KINDS[:-1], "all answerable"):
        cells = [f"{name} {s[kind]['mean']:.2f} {s[kind]['any']:.0%} {s[kind]['half']:.0%}" for name, s in sets.items()]
        print(f"  {kind:<15} " + "   ".join(cells))

    if args.worst:
        by_id = {c["id"]: c for c in convs}
        scored = []
        for q in questions:
            if q["evidence"]:
                turns_of = by_id[q["conversation"]]["sessions"]
                texts = [turns_of[s]["turns"][t]["text"] for s, t in q["evidence"]]
                scored.append((corpus.wording_overlap(q["question"], texts), q, texts))
        for overlap, q, texts in sorted(scored, key=lambda x: x[0])[: args.worst]:
            print(f"{overlap:.2f} {q['id']} {q['question']}\n       " + "\n       ".join(texts))
    print("fingerprint", corpus.fingerprint())
    return 1 if errors else 0


def _span_days(conversation: dict) -> int:
    dates = [dt.datetime.fromisoformat(s["date"]) for s in conversation["sessions"]]
    return (dates[-1] - dates[0]).days


if __name__ == "__main__":
    sys.exit(main())
