"""Long-term memories found for later questions, measured on the labelled people of ``bench/memoryrecall``:
recall@k, nDCG@10 and MRR per kind of question, how often a question no memory answers brings one anyway,
and how the two similarity thresholds that decide what is kept trade one against the other.

Each person's sessions are recorded as they told them and committed (the built-in extraction, what a
commit runs), in a database of its own (``recollect_bench_memoryrecall``). Then each question is asked as
the first question of a new chat: its memories are ranked by ``retrievers.memory_candidates``, what a
session search and every chat turn run, with up to ten kept.

- A label is found at rank r when the r-th memory kept is the fact it names (``corpus.matches``).
  recall@k is the share of a question's labels found within k; nDCG@10 counts each label once; MRR is
  one over the rank of the first label found. ``none`` questions have no labels: for them, ``clean`` is
  the share that kept no memory at all.
- ``noise@5``: for the questions that have labels, the memories among the first five that answer none.
- ``stored``: the share of labels whose fact the extraction kept at all (the ceiling of recall); the
  ``of stored`` figures count only those, to tell retrieval's misses from extraction's.

    .venv/bin/python bench/memory_recall_eval.py                    # both parts
    .venv/bin/python bench/memory_recall_eval.py --part tuning --verbose
    .venv/bin/python bench/memory_recall_eval.py --sweep            # thresholds side by side
    .venv/bin/python bench/memory_recall_eval.py --json out.json
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._setup import django_for_bench
from bench.memoryrecall import corpus

DATABASE = "recollect_bench_memoryrecall"
KEPT = 10
SIMILARITY_SWEEP = (0.25, 0.3, 0.35, 0.4, 0.45)
IMPLICATION_SWEEP = (0.4, 0.45, 0.5, 0.55, 0.6)


def load(part: str | None) -> list[dict]:
    """Records and commits each person's sessions, embeds what was kept; the people with their owner and
    their stored memories."""
    from django.contrib.auth import get_user_model

    from foundation.embedding import embeddings_backfill
    from sessions_app import services
    from sessions_app.models import Memory

    people = corpus.people(part)
    for person in people:
        owner = get_user_model().objects.create(username=f"{person['part']}-{person['person']}")
        for number, turns in enumerate(person["sessions"], start=1):
            session = services.session_create(owner=owner, title=f"chat {number}")
            services.message_bulk_create(
                session=session, messages=[services.NewMessage(role="user", content=turn) for turn in turns]
            )
            services.session_commit(session=session)
        person["owner"] = owner
    embeddings_backfill()
    for person in people:
        person["memories"] = list(
            Memory.objects.filter(owner=person["owner"], superseded_by__isnull=True).values("id", "key", "content")
        )
    return people


def ask(person: dict, text: str):
    """The question as a session search reads it as the first question of a new chat."""
    from foundation import ai
    from foundation.text import texts_lexemes
    from retrieval_app.retrievers import Query

    vector, model = ai.embed_query(text, purpose="bench")
    return Query(text=text, vector=vector, model=model, lexemes=tuple(texts_lexemes(text)[0]))


def kept(person: dict, query) -> list[int]:
    """The ids of the memories kept for ``query``, best first."""
    from retrieval_app import retrievers
    from sessions_app.models import Memory

    memories = Memory.objects.filter(owner=person["owner"], superseded_by__isnull=True)
    return [c.row.id for c in retrievers.memory_candidates(memories, query, limit=KEPT).candidates]


def scores(person: dict, question: dict, ranked: list[int]) -> dict:
    """The question's figures for the memories ``ranked``."""
    by_id = {memory["id"]: memory for memory in person["memories"]}
    labels = question["relevant"]
    if not labels:
        return {"clean": float(not ranked), "kept": len(ranked)}
    stored = [
        label
        for label in labels
        if any(corpus.matches(label, key=m["key"], content=m["content"]) for m in by_id.values())
    ]
    rank_of: dict[int, int] = {}  # label -> the first rank holding it
    gains = []
    for rank, memory_id in enumerate(ranked, start=1):
        memory = by_id[memory_id]
        hit = [
            i for i, label in enumerate(labels) if corpus.matches(label, key=memory["key"], content=memory["content"])
        ]
        fresh = [i for i in hit if i not in rank_of]
        for i in fresh:
            rank_of[i] = rank
        gains.append(1.0 if fresh else 0.0)
    dcg = sum(gain / math.log2(rank + 1) for rank, gain in enumerate(gains[:10], start=1))
    ideal = sum(1 / math.log2(rank + 1) for rank in range(1, min(len(labels), 10) + 1))
    first = min(rank_of.values(), default=None)
    figures = {f"recall@{k}": sum(1 for r in rank_of.values() if r <= k) / len(labels) for k in (1, 3, 5, 10)}
    figures |= {
        "ndcg@10": dcg / ideal,
        "mrr": 1 / first if first else 0.0,
        "stored": len(stored) / len(labels),
        "noise@5": sum(
            1 for gain, memory_id in zip(gains[:5], ranked[:5], strict=False) if not _answers(by_id[memory_id], labels)
        ),
    }
    if stored:
        figures["recall@5 of stored"] = sum(1 for i, r in rank_of.items() if r <= 5) / len(stored)
    return figures


def _answers(memory: dict, labels: list[dict]) -> bool:
    return any(corpus.matches(label, key=memory["key"], content=memory["content"]) for label in labels)


def evaluate(people: list[dict], *, verbose: bool = False) -> dict[str, dict[str, float]]:
    """Mean figures per kind of question, and over all questions with labels (``all``)."""
    by_kind: dict[str, list[dict]] = defaultdict(list)
    for person in people:
        for question in person["questions"]:
            ranked = kept(person, person["queries"][question["id"]])
            figures = scores(person, question, ranked)
            by_kind[question["kind"]].append(figures)
            if question["kind"] != "none":
                by_kind["all"].append(figures)
            if verbose and (figures.get("recall@5", 1.0) < 1.0 or figures.get("clean", 1.0) < 1.0):
                memories = {m["id"]: m["content"] for m in person["memories"]}
                print(f"  {question['id']} ({question['kind']}) {question['text']!r}")
                print(f"    wanted {[label['content'] for label in question['relevant']]}")
                print(f"    kept   {[memories[i] for i in ranked[:5]]}")
    return {kind: _means(rows) for kind, rows in by_kind.items()}


def _means(rows: list[dict]) -> dict[str, float]:
    names = {name for row in rows for name in row}
    means = {
        name: sum(row[name] for row in rows if name in row) / sum(1 for row in rows if name in row) for name in names
    }
    return {"questions": len(rows), **{name: round(value, 3) for name, value in sorted(means.items())}}


def _print(title: str, results: dict[str, dict[str, float]]) -> None:
    print(title)
    columns = (
        "recall@1",
        "recall@3",
        "recall@5",
        "recall@10",
        "ndcg@10",
        "mrr",
        "noise@5",
        "stored",
        "recall@5 of stored",
    )
    print(
        f"  {'kind':13s} {'n':>3s} "
        + " ".join(f"{c:>9s}" for c in ("r@1", "r@3", "r@5", "r@10", "nDCG@10", "MRR", "noise@5", "stored", "r@5|st"))
    )
    for kind in (*corpus.KINDS, "all"):
        row = results.get(kind)
        if row is None:
            continue
        if kind == "none":
            clean, kept = row["clean"], row["kept"]
            print(f"  {kind:13s} {row['questions']:3d}   clean {clean:.3f}, memories kept {kept:.2f} a question")
            continue
        print(f"  {kind:13s} {row['questions']:3d} " + " ".join(f"{row.get(c, float('nan')):9.3f}" for c in columns))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=corpus.PARTS)
    parser.add_argument("--verbose", action="store_true")
    parser.add_argument("--sweep", action="store_true", help="each threshold in turn, the other at its default")
    parser.add_argument("--json")
    args = parser.parse_args()
    errors = corpus.check()
    if errors:
        raise SystemExit("\n".join(errors))

    django_for_bench(DATABASE, fresh=True)
    from django.conf import settings

    import foundation.ai as ai

    people = load(args.part)
    for person in people:
        person["queries"] = {q["id"]: ask(person, q["text"]) for q in person["questions"]}
    report: dict[str, dict] = {}
    parts = [args.part] if args.part else list(corpus.PARTS)
    for part in parts:
        group = [person for person in people if person["part"] == part]
        report[part] = evaluate(group, verbose=args.verbose)
        _print(
            f"{part}: {len(group)} people, {sum(len(p['memories']) for p in group)} memories stored, "
            f"similarity threshold {settings.MEMORY_SIMILARITY_THRESHOLD}, "
            f"implication {ai.IMPLICATION_ASKED_SIMILARITY}",
            report[part],
        )
    if args.sweep:
        default_similarity, default_implication = settings.MEMORY_SIMILARITY_THRESHOLD, ai.IMPLICATION_ASKED_SIMILARITY
        for part in parts:
            group = [person for person in people if person["part"] == part]
            for similarity in SIMILARITY_SWEEP:
                settings.MEMORY_SIMILARITY_THRESHOLD = similarity
                _summary(f"{part} similarity {similarity}", evaluate(group))
            settings.MEMORY_SIMILARITY_THRESHOLD = default_similarity
            for implication in IMPLICATION_SWEEP:
                ai.IMPLICATION_ASKED_SIMILARITY = implication
                _summary(f"{part} implication {implication}", evaluate(group))
            ai.IMPLICATION_ASKED_SIMILARITY = default_implication
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))


def _summary(title: str, results: dict[str, dict[str, float]]) -> None:
    every, none, implied = results["all"], results.get("none", {}), results.get("implied", {})
    print(
        f"  {title:28s} all r@5 {every['recall@5']:.3f} nDCG {every['ndcg@10']:.3f} MRR {every['mrr']:.3f} "
        f"noise@5 {every['noise@5']:.2f} | implied r@5 {implied.get('recall@5', float('nan')):.3f} "
        f"| none clean {none.get('clean', float('nan')):.3f}"
    )


if __name__ == "__main__":
    main()
