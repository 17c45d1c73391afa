"""Fits recall's learned fusion on the labelled conversation sets, and says how well it ranks.

Each set (``bench/recallset``, ``bench/dialogset``) is loaded as ``bench/recall_eval.py`` loads it, one
user per conversation. For every question, recall's own candidate step (``recall_candidates``: the dense
and BM25 candidates with every signal, exactly as the product computes them) is run once, and the
candidates are kept with their signals and whether each is an evidence turn. A logistic regression of
"is evidence" on the signals is then fitted:

- cross-validated, leaving one conversation out at a time, to say how well the fusion ranks turns of
  conversations it was not fitted on (recall@k, hit@k and MRR by question kind, beside reciprocal-rank
  fusion of the same candidates), and fitted on the other set alone, to say how well it carries over
  to conversations written another way;
- on every conversation of every set, for the weights the product uses (``retrieval_app.recall``),
  printed ready to paste.

    .venv/bin/python bench/recall_fit.py                       # both sets
    .venv/bin/python bench/recall_fit.py --sets recallset --signals dense,bm25,coverage
    .venv/bin/python bench/recall_fit.py --cache /tmp/recall-signals.json   # reuse the candidates of a previous run
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._setup import django_for_bench

K_VALUES = (5, 10, 25)
MAX_RESULTS = 25
L2 = 1.0


def collect(set_name: str, database: str) -> list[dict]:
    """Every answerable question of the set, with its candidates' signals and labels."""
    corpus = importlib.import_module(f"bench.{set_name}.corpus")
    problems = corpus.check()
    if problems:
        sys.exit(f"{set_name} does not check out:\n" + "\n".join(problems))
    django_for_bench(database)
    from django.contrib.auth import get_user_model
    from django.db import connection

    from bench.recall_eval import embed_all, load_conversation
    from foundation import ai
    from retrieval_app.recall import MIN_POOL, recall_candidates, recall_query, recall_scope

    users = get_user_model()
    loaded = []
    for conversation in corpus.conversations():
        owner = users.objects.create_user(f"{set_name}-{conversation['id']}")
        loaded.append((conversation, owner, load_conversation(owner, conversation)))
    embedded, seconds = embed_all()
    print(f"{set_name}: embedded {embedded} turns in {seconds:.0f} s", flush=True)
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    questions = []
    for conversation, owner, ids in loaded:
        for q in corpus.questions(conversation["id"]):
            if not q["evidence"]:
                continue
            evidence = {int(ids[(s, t)]) for s, t in q["evidence"]}
            vector, model = ai.embed_query(q["question"], purpose="bench")
            scope = recall_scope(owner=owner)
            asked = recall_query(text=q["question"], vector=vector, model=model, scope=scope)
            found = recall_candidates(
                scope=scope,
                query=asked,
                pool=max(MIN_POOL, 3 * MAX_RESULTS),
                strategy="learned",
                with_neighbours=True,
            )
            neighbours = set(found.neighbours)
            questions.append(
                {
                    "set": set_name,
                    "conversation": conversation["id"],
                    "kind": q["kind"],
                    "evidence": len(evidence),
                    "candidates": [
                        {
                            "pk": c.pk,
                            "label": int(c.pk in evidence),
                            "neighbour": c.pk in neighbours,
                            "session": str(c.session_id),
                            "signals": c.signals,
                        }
                        for c in found.by_pk.values()
                    ],
                    "rrf": [pk for pk, _ in found.dense] + [pk for pk, _ in found.keyword],
                    "dense": [pk for pk, _ in found.dense],
                    "keyword": [pk for pk, _ in found.keyword],
                }
            )
    return questions


def matrix(question: dict, names: list[str]) -> tuple[np.ndarray, np.ndarray]:
    x = np.array([[c["signals"].get(n, 0.0) for n in names] for c in question["candidates"]], dtype=float)
    y = np.array([c["label"] for c in question["candidates"]], dtype=float)
    return x.reshape(len(question["candidates"]), len(names)), y


def fit(questions: list[dict], names: list[str]) -> tuple[np.ndarray, float]:
    """L2-regularised logistic regression by Newton's method; returns (weights, bias)."""
    parts = [matrix(q, names) for q in questions if q["candidates"]]
    x = np.vstack([p[0] for p in parts])
    y = np.concatenate([p[1] for p in parts])
    x1 = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(x1.shape[1])
    penalty = np.eye(x1.shape[1]) * L2
    penalty[-1, -1] = 0.0
    for _ in range(50):
        p = 1 / (1 + np.exp(-(x1 @ w)))
        gradient = x1.T @ (p - y) + penalty @ w
        hessian = (x1 * (p * (1 - p))[:, None]).T @ x1 + penalty
        step = np.linalg.solve(hessian, gradient)
        w -= step
        if np.abs(step).max() < 1e-8:
            break
    return w[:-1], float(w[-1])


def judge(ranked: list[int], question: dict) -> dict[str, float]:
    evidence = {c["pk"] for c in question["candidates"] if c["label"]}
    total = question["evidence"]
    scores = {}
    for k in K_VALUES:
        found = evidence & set(ranked[:k])
        scores[f"R@{k}"] = len(found) / total
        scores[f"hit@{k}"] = float(bool(found))
    first = next((i for i, pk in enumerate(ranked) if pk in evidence), None)
    scores["MRR"] = 0.0 if first is None else 1 / (first + 1)
    return scores


def rrf_ranking(question: dict) -> list[int]:
    scores: dict[int, float] = defaultdict(float)
    for ranked in (question["dense"], question["keyword"]):
        for rank, pk in enumerate(ranked, start=1):
            scores[pk] += 1 / (60 + rank)
    return sorted(scores, key=lambda pk: (-scores[pk], pk))[:MAX_RESULTS]


def learned_ranking(
    question: dict, names: list[str], weights: np.ndarray, bias: float, diversity: float = 0.0
) -> list[int]:
    if not question["candidates"]:
        return []
    x, _ = matrix(question, names)
    logits = list(x @ weights + bias)
    candidates = question["candidates"]
    left = set(range(len(candidates)))
    taken: dict[str, int] = defaultdict(int)
    ranked = []
    while left and len(ranked) < MAX_RESULTS:
        best = min(
            left, key=lambda i: (-(logits[i] - diversity * taken[candidates[i]["session"]]), candidates[i]["pk"])
        )
        left.discard(best)
        taken[candidates[best]["session"]] += 1
        ranked.append(candidates[best]["pk"])
    return ranked


def table(label: str, rows: list[tuple[dict, dict]]) -> None:
    kinds = [*sorted({q["kind"] for q, _ in rows}), "all"]
    for kind in kinds:
        group = [s for q, s in rows if kind in ("all", q["kind"])]
        means = {key: np.mean([s[key] for s in group]) for key in group[0]}
        line = f"{label:<22} {kind:<10} {len(group):>4}"
        line += "".join(f" {means[f'R@{k}']:>6.3f}" for k in K_VALUES)
        line += "".join(f" {means[f'hit@{k}']:>6.3f}" for k in K_VALUES) + f" {means['MRR']:>6.3f}"
        print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sets", default="recallset,dialogset")
    parser.add_argument("--diversity", type=float, default=0.0, help="logit penalty per result of the same session")
    parser.add_argument("--neighbours", action="store_true", help="rank the candidates' neighbouring turns too")
    parser.add_argument("--signals", default="", help="comma-separated signals to fit (default: every one)")
    parser.add_argument(
        "--cache", default="", help="a JSON file of collected candidates: read if present, else written"
    )
    args = parser.parse_args()
    os.environ.setdefault("AUTO_COMMIT_TURNS", "0")
    os.environ.setdefault("ENABLE_HISTORY_SUMMARIZATION", "false")

    sets = [s.strip() for s in args.sets.split(",") if s.strip()]
    cache = Path(args.cache) if args.cache else None
    if cache and cache.exists():
        questions = [q for q in json.loads(cache.read_text()) if q["set"] in sets]
    else:
        started = time.perf_counter()
        questions = []
        for name in sets:
            questions += collect(name, f"recollect_bench_fit_{name}")
        print(f"collected {len(questions)} questions in {time.perf_counter() - started:.0f} s")
        if cache:
            cache.write_text(json.dumps(questions))
    names = [n for n in args.signals.split(",") if n] or sorted(questions[0]["candidates"][0]["signals"])
    if not args.neighbours:
        for q in questions:
            q["candidates"] = [c for c in q["candidates"] if not c["neighbour"]]

    head = f"{'ranking':<22} {'kind':<10} {'n':>4}" + "".join(f" {f'R@{k}':>6}" for k in K_VALUES)
    head += "".join(f" {f'hit@{k}':>6}" for k in K_VALUES) + f" {'MRR':>6}"
    for name in sets:
        mine = [q for q in questions if q["set"] == name]
        reachable = np.mean([sum(c["label"] for c in q["candidates"]) / q["evidence"] for q in mine])
        print(f"\n{name}: {len(mine)} answerable questions; evidence among the candidates: {reachable:.3f}")
        print(head)
        print("-" * len(head))
        table("rrf", [(q, judge(rrf_ranking(q), q)) for q in mine])
        rows = []
        for conversation in sorted({q["conversation"] for q in mine}):
            train = [q for q in questions if q["conversation"] != conversation]
            weights, bias = fit(train, names)
            rows += [
                (q, judge(learned_ranking(q, names, weights, bias, args.diversity), q))
                for q in mine
                if q["conversation"] == conversation
            ]
        table("learned (held out)", rows)
        others = [q for q in questions if q["set"] != name]
        if others:
            weights, bias = fit(others, names)
            table("learned (other set)", [(q, judge(learned_ranking(q, names, weights, bias), q)) for q in mine])
    weights, bias = fit(questions, names)
    print("\nweights fitted on every conversation of " + ", ".join(sets) + ":")
    print("    weights={")
    for name, weight in zip(names, weights, strict=True):
        print(f'        "{name}": {weight:.3f},')
    print("    },")
    print(f"    bias={bias:.3f},")


if __name__ == "__main__":
    main()
