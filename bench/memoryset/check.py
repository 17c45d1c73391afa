"""Validates the memory extraction set and prints its size by part and kind, and a fingerprint.

.venv/bin/python bench/memoryset/check.py
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.memoryset import corpus  # noqa: E402


def main() -> int:
    errors = corpus.check()
    for error in errors:
        print("ERROR", error)
    for part in corpus.PARTS:
        rows = corpus.statements(part)
        positives = [row for row in rows if row["expect"]]
        memories = Counter(m["kind"] for row in positives for m in row["expect"])
        negatives = Counter(row["negative"] for row in rows if not row["expect"])
        several = sum(1 for row in positives if len(row["expect"]) > 1)
        print(
            f"{part}: {len(rows)} statements, {len(positives)} with {sum(memories.values())} memories "
            f"({several} with several), {sum(negatives.values())} negatives"
        )
        print("  memories by kind: " + ", ".join(f"{k} {memories[k]}" for k in corpus.KINDS))
        print("  negatives by kind: " + ", ".join(f"{k} {negatives[k]}" for k in corpus.NEGATIVES))
    print("fingerprint", corpus.fingerprint())
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
