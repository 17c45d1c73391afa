"""Long-term memory extraction measured on the labelled statements of ``bench/memoryset``: precision and recall
by kind of fact, and how many of the statements that should yield nothing stay clean, for each part of the set.

Each statement is one user turn given to the built-in extraction (``foundation.ai.memories.extract``,
what the extractive engine runs at every commit). A memory found matches an expected one when its category is
one the label accepts, every key word occurs in its key and every content word in its text; each found memory
matches at most one expected memory and the reverse (a maximum matching, so the order of either list does not
matter).

- recall of a kind: the expected memories of that kind that were found;
- precision of a kind: of the memories found in statements of that kind, those that matched an expected one
  (a found memory that matched counts for the kind it matched; one that matched nothing counts against the
  statement's own kind: that of its first expected memory);
- negatives: per kind of statement that must yield nothing, how many stayed clean and how many memories were
  wrongly kept; these false memories also count against the overall precision.

    .venv/bin/python bench/memory_eval.py                  # both parts
    .venv/bin/python bench/memory_eval.py --part tuning --verbose   # with every miss and false memory
    .venv/bin/python bench/memory_eval.py --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.memoryset import corpus


def _extract():
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.dev")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()
    from foundation.ai import memories

    return memories.extract


def _words_in(words: str, text: str) -> bool:
    """Every word of ``words`` (``a|b`` for either) occurs in ``text``, case aside."""
    text = text.lower()
    return all(any(option in text for option in word.lower().split("|")) for word in words.split())


def matches(expected: dict, found) -> bool:
    return (
        found.category in expected["category"].split("|")
        and _words_in(expected["key"], found.key)
        and _words_in(expected["content"], found.content)
    )


def match(expect: list[dict], found: list) -> dict[int, int]:
    """A maximum matching of expected memories (by index) to found ones (by index)."""
    owner: dict[int, int] = {}  # found index -> expected index

    def place(e: int, seen: set[int]) -> bool:
        for f, candidate in enumerate(found):
            if f in seen or not matches(expect[e], candidate):
                continue
            seen.add(f)
            if f not in owner or place(owner[f], seen):
                owner[f] = e
                return True
        return False

    for e in range(len(expect)):
        place(e, set())
    return {e: f for f, e in owner.items()}


def evaluate(rows: list[dict], extract) -> dict:
    expected, hits, predicted, right = Counter(), Counter(), Counter(), Counter()
    negatives, dirty, false_on_negatives = Counter(), Counter(), Counter()
    misses, false_memories = [], []
    started = time.perf_counter()
    for row in rows:
        found = extract([("user", row["text"])])
        pairs = match(row["expect"], found)
        own_kind = corpus.kind_of(row)
        for e, memory in enumerate(row["expect"]):
            expected[memory["kind"]] += 1
            if e in pairs:
                hits[memory["kind"]] += 1
                predicted[memory["kind"]] += 1
                right[memory["kind"]] += 1
            else:
                misses.append((row, memory, found))
        matched = set(pairs.values())
        for f, candidate in enumerate(found):
            if f in matched:
                continue
            false_memories.append((row, candidate))
            if row.get("negative"):
                false_on_negatives[row["negative"]] += 1
            else:
                predicted[own_kind] += 1
        if row.get("negative"):
            negatives[row["negative"]] += 1
            dirty[row["negative"]] += bool(found)
    elapsed_ms = (time.perf_counter() - started) * 1000
    return _figures(len(rows), elapsed_ms, expected, hits, predicted, right, negatives, dirty, false_on_negatives) | {
        "misses": misses,
        "false_memories": false_memories,
    }


def _figures(count, elapsed_ms, expected, hits, predicted, right, negatives, dirty, false_on_negatives) -> dict:
    kinds = {
        kind: {
            "expected": expected[kind],
            "found": hits[kind],
            "recall": hits[kind] / expected[kind] if expected[kind] else None,
            "predicted": predicted[kind],
            "precision": right[kind] / predicted[kind] if predicted[kind] else None,
        }
        for kind in corpus.KINDS
    }
    all_predicted = sum(predicted.values()) + sum(false_on_negatives.values())
    return {
        "statements": count,
        "kinds": kinds,
        "negatives": {
            kind: {
                "statements": negatives[kind],
                "clean": negatives[kind] - dirty[kind],
                "false": false_on_negatives[kind],
            }
            for kind in corpus.NEGATIVES
        },
        "overall": {
            "expected": sum(expected.values()),
            "found": sum(hits.values()),
            "predicted": all_predicted,
            "recall": sum(hits.values()) / max(1, sum(expected.values())),
            "precision": sum(right.values()) / max(1, all_predicted),
        },
        "ms_per_statement": elapsed_ms / max(1, count),
    }


def _pct(value: float | None) -> str:
    return "   -  " if value is None else f"{value * 100:5.1f}%"


def report(part: str, result: dict, *, verbose: bool) -> None:
    print(f"\n== {part}: {result['statements']} statements ({result['ms_per_statement']:.2f} ms each)")
    print(f"{'kind':<12} {'expected':>8} {'found':>6} {'recall':>7} {'kept':>6} {'precision':>9}")
    for kind, row in result["kinds"].items():
        print(
            f"{kind:<12} {row['expected']:>8} {row['found']:>6} {_pct(row['recall']):>7} "
            f"{row['predicted']:>6} {_pct(row['precision']):>9}"
        )
    overall = result["overall"]
    print(
        f"{'overall':<12} {overall['expected']:>8} {overall['found']:>6} {_pct(overall['recall']):>7} "
        f"{overall['predicted']:>6} {_pct(overall['precision']):>9}"
    )
    print(f"{'negatives':<14} {'statements':>10} {'clean':>6} {'false memories':>15}")
    for kind, row in result["negatives"].items():
        print(f"{kind:<14} {row['statements']:>10} {row['clean']:>6} {row['false']:>15}")
    if not verbose:
        return
    print("\n-- misses")
    for row, memory, found in result["misses"]:
        got = "; ".join(f"{c.category}/{c.key}: {c.content}" for c in found) or "nothing"
        print(
            f"{row['id']} {row['text']!r}\n     wanted {memory['category']} key~{memory['key']!r} "
            f"content~{memory['content']!r}; got {got}"
        )
    print("\n-- false memories")
    for row, candidate in result["false_memories"]:
        print(f"{row['id']} {row['text']!r}\n     {candidate.category}/{candidate.key}: {candidate.content}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--part", choices=[*corpus.PARTS, "all"], default="all")
    parser.add_argument("--verbose", action="store_true", help="list every miss and every false memory")
    parser.add_argument("--json", help="also write the figures to this file")
    args = parser.parse_args()
    errors = corpus.check()
    if errors:
        print("\n".join(f"ERROR {e}" for e in errors))
        return 1
    extract = _extract()
    parts = corpus.PARTS if args.part == "all" else (args.part,)
    results = {}
    for part in parts:
        results[part] = evaluate(corpus.statements(part), extract)
        report(part, results[part], verbose=args.verbose)
    print("\nfingerprint", corpus.fingerprint())
    if args.json:
        figures = {
            part: {k: v for k, v in result.items() if k not in ("misses", "false_memories")}
            for part, result in results.items()
        }
        Path(args.json).write_text(json.dumps({"fingerprint": corpus.fingerprint(), **figures}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
