"""Cross-session recall on labelled conversations: recall@k, hit rate and MRR of the evidence turns, by question
kind and by ranking strategy, with the latency of each call, on ``bench/recallset`` (questions that paraphrase
their evidence), ``bench/dialogset`` (questions worded like their evidence, as in real chat logs) or both, each
set's tables printed one after the other with its fingerprint.

Each conversation is loaded for a user of its own, one chat session per conversation session, every turn a
"user" message with ``{"speaker": name}`` in its metadata and the session's date plus one minute per turn as its
time. The messages are then embedded by the configured model (the local MiniLM by default) and every question is
asked of ``retrieval_app.recall.memory_recall`` with 25 results, no token limit and no threshold.

A question's evidence turns are judged in the top k results: recall@k is the share of them found (averaged over
questions), hit@k whether any was, MRR the reciprocal rank of the first. "absent" questions, about things never
said, have no evidence: for them the top similarity (the highest cosine similarity among the results) is
reported, lower being better, beside that of answerable questions.

    .venv/bin/python bench/recall_eval.py                                  # both sets, default strategy
    .venv/bin/python bench/recall_eval.py --set dialogset --strategies dense,bm25,rrf --json out.json
    .venv/bin/python bench/recall_eval.py --conversations 2 --questions 10 # a quick run

Both sets are loaded into one database, each conversation for its own user, so neither sees the other's turns.
``--json`` writes one set's report, or with both ``{"recallset": report, "dialogset": report}``.

When ``memory_recall`` does not take ``strategy`` yet, it is called without it and the results are labelled
"current".
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._setup import Timer, django_for_bench, percentiles
from bench.dialogset import corpus as dialogset_corpus
from bench.recallset import corpus

SETS = {"recallset": corpus, "dialogset": dialogset_corpus}
K_VALUES = (5, 10, 25)
KINDS = corpus.KINDS
ANSWERABLE = tuple(k for k in KINDS if k != "absent")
MAX_RESULTS = 25


def load_conversation(owner, conversation: dict, set_name: str = "recallset") -> dict[tuple[int, int], str]:
    """Creates the conversation's sessions and messages; returns (session index, turn index) -> message id."""
    from sessions_app.services import NewMessage, message_bulk_create, session_create

    ids: dict[tuple[int, int], str] = {}
    speakers = " and ".join(conversation["speakers"])
    for session in conversation["sessions"]:
        start = dt.datetime.fromisoformat(session["date"]).replace(tzinfo=dt.UTC)
        chat = session_create(
            owner=owner,
            title=f"{speakers}, {start:%d %B %Y}",
            metadata={set_name: conversation["id"], "session_index": session["index"]},
        )
        rows = message_bulk_create(
            session=chat,
            messages=[
                NewMessage(
                    role="user",
                    content=turn["text"],
                    created_at=start + dt.timedelta(minutes=number),
                    metadata={"speaker": turn["speaker"]},
                )
                for number, turn in enumerate(session["turns"])
            ],
        )
        assert len(rows) == len(session["turns"])
        for number, row in enumerate(rows):
            ids[(session["index"], number)] = str(row.id)
    return ids


def embed_all() -> tuple[int, float]:
    from foundation.embedding import embeddings_backfill

    def progress(spec, total):
        if not total:
            return None
        done = [0]

        def tick(count: int) -> None:
            done[0] += count
            if done[0] % 1024 < count or done[0] >= total:
                print(f"  embedded {done[0]}/{total} {spec.name}", flush=True)

        return tick

    started = time.perf_counter()
    counts = embeddings_backfill(progress=progress)
    return sum(counts.values()), time.perf_counter() - started


class Recall:
    """Calls memory_recall with a strategy, or without one when the service does not take it yet ("current").
    "default" calls it without one too: the service then ranks as its settings say (RECALL_STRATEGY)."""

    def __init__(self, strategy: str):
        from django.conf import settings

        from retrieval_app.recall import memory_recall

        self.call_service = memory_recall
        self.requested = strategy
        self.label = strategy
        self.kwargs = {"strategy": strategy}
        if strategy == "default":
            self.kwargs = {}
            configured = getattr(settings, "RECALL_STRATEGY", "")
            self.label = f"default={configured}" if configured else "default"

    def __call__(self, owner, query: str) -> dict:
        try:
            return self.call_service(
                owner=owner, query=query, max_results=MAX_RESULTS, max_tokens=100_000, threshold=0.0, **self.kwargs
            )
        except TypeError as exc:
            if "strategy" not in str(exc) or not self.kwargs:
                raise
            self.kwargs = {}
            self.label = "current"
            return self(owner, query)


def judge(ranked: list[str], evidence: set[str]) -> dict[str, float]:
    scores: dict[str, float] = {}
    for k in K_VALUES:
        found = evidence & set(ranked[:k])
        scores[f"recall@{k}"] = len(found) / len(evidence)
        scores[f"hit@{k}"] = 1.0 if found else 0.0
    first = next((i for i, message_id in enumerate(ranked) if message_id in evidence), None)
    scores["mrr"] = 0.0 if first is None else 1.0 / (first + 1)
    return scores


def mean(values: list[float]) -> float | None:
    return round(statistics.mean(values), 3) if values else None


def summarize(rows: list[dict]) -> dict:
    """Averages of one strategy's question rows: per kind, over all answerable kinds, and for absent ones."""
    out: dict = {"by_kind": {}}
    answerable = [r for r in rows if r["kind"] != "absent"]
    groups = {kind: [r for r in rows if r["kind"] == kind] for kind in ANSWERABLE}
    groups["all answerable"] = answerable
    for name, group in groups.items():
        if not group:
            continue
        metrics = {key: mean([r["scores"][key] for r in group]) for key in group[0]["scores"]}
        out["by_kind"][name] = {"n": len(group), **metrics, "latency_ms": percentiles([r["ms"] for r in group])}
    absent = [r for r in rows if r["kind"] == "absent"]
    out["top_similarity"] = {
        "absent": mean([r["top_similarity"] for r in absent if r["top_similarity"] is not None]),
        "answerable": mean([r["top_similarity"] for r in answerable if r["top_similarity"] is not None]),
        "absent_n": len(absent),
    }
    out["latency_ms"] = percentiles([r["ms"] for r in rows])
    out["sources"] = dict(Counter(r["source"] for r in rows))
    return out


def print_table(results: dict[str, dict]) -> None:
    head = f"{'strategy':<14} {'kind':<15} {'n':>4}" + "".join(f" {f'R@{k}':>6}" for k in K_VALUES)
    head += "".join(f" {f'hit@{k}':>6}" for k in K_VALUES) + f" {'MRR':>6} {'p50 ms':>8} {'p95 ms':>8}"
    print(head)
    print("-" * len(head))
    for label, summary in results.items():
        for kind, m in summary["by_kind"].items():
            line = f"{label:<14} {kind:<15} {m['n']:>4}"
            line += "".join(f" {m[f'recall@{k}']:>6.3f}" for k in K_VALUES)
            line += "".join(f" {m[f'hit@{k}']:>6.3f}" for k in K_VALUES)
            line += f" {m['mrr']:>6.3f} {m['latency_ms']['p50']:>8.1f} {m['latency_ms']['p95']:>8.1f}"
            print(line)
        sims = summary["top_similarity"]
        print(
            f"{label:<14} {'absent':<15} {sims['absent_n']:>4}  mean top similarity {sims['absent']} "
            f"(answerable: {sims['answerable']}); all calls p50 {summary['latency_ms']['p50']} ms, "
            f"p95 {summary['latency_ms']['p95']} ms; sources {summary['sources']}"
        )
        print("-" * len(head))


def load_set(name: str, conversations: list[dict], questions: dict[str, list[dict]], model: str) -> dict:
    """Loads one set's conversations, each for a user of its own; returns its report so far and what was loaded."""
    from django.contrib.auth import get_user_model

    users = get_user_model()
    module = SETS[name]
    report: dict = {
        "set": name,
        "fingerprint": module.fingerprint(),
        "embedding_model": model,
        "conversations": len(conversations),
        "questions": sum(len(q) for q in questions.values()),
        "settings": {"max_results": MAX_RESULTS, "max_tokens": 100_000, "threshold": 0.0},
    }
    started = time.perf_counter()
    loaded = []
    for conversation in conversations:
        owner = users.objects.create_user(f"{name}-{conversation['id']}")
        loaded.append((conversation, owner, load_conversation(owner, conversation, name)))
    report["messages"] = sum(len(ids) for _, _, ids in loaded)
    report["load_seconds"] = round(time.perf_counter() - started, 1)
    print(
        f"{name}: loaded {report['messages']} turns of {len(conversations)} conversations in {report['load_seconds']} s"
    )
    return {"report": report, "loaded": loaded, "questions": questions}


def ask_all(strategies: list[str], loaded: list, questions: dict[str, list[dict]]) -> tuple[dict, dict]:
    """Every question of the loaded conversations, asked with each strategy: summaries and per-question rows."""
    results: dict[str, dict] = {}
    per_question: dict[str, list[dict]] = {}
    for strategy in strategies:
        recall = Recall(strategy)
        try:
            recall(loaded[0][1], "warm-up question about nothing in particular")
        except Exception as exc:  # an unknown strategy, say: report it and go on with the next
            print(f"strategy {strategy!r} failed: {type(exc).__name__}: {exc}")
            results[strategy] = {"error": f"{type(exc).__name__}: {exc}"}
            continue
        rows = []
        for conversation, owner, ids in loaded:
            for q in questions[conversation["id"]]:
                with Timer() as timer:
                    result = recall(owner, q["question"])
                ranked = [str(m["id"]) for m in result["messages"]]
                similarities = [m["similarity"] for m in result["messages"] if m.get("similarity") is not None]
                row = {
                    "id": q["id"],
                    "kind": q["kind"],
                    "ms": timer.ms,
                    "source": result.get("source", ""),
                    "top_similarity": max(similarities) if similarities else None,
                    "returned": len(ranked),
                }
                if q["evidence"]:
                    evidence = {ids[(s, t)] for s, t in q["evidence"]}
                    row["scores"] = judge(ranked, evidence)
                    row["first_rank"] = next((i + 1 for i, m in enumerate(ranked) if m in evidence), None)
                rows.append(row)
        label = recall.label if recall.label not in results else f"{recall.label}:{strategy}"
        results[label] = summarize(rows)
        per_question[label] = rows
        print(f"{label}: {len(rows)} questions asked")
    return results, per_question


def print_report(report: dict) -> None:
    print()
    print(
        f"{report['set']} {report['fingerprint']}: {report['conversations']} conversations, {report['messages']} "
        f"turns, {report['questions']} questions; model {report['embedding_model']}"
    )
    results = report["results"]
    print_table({k: v for k, v in results.items() if "error" not in v})
    for label, summary in results.items():
        if "error" in summary:
            print(f"{label}: {summary['error']}")


def commit_and_embed(*, commit: bool) -> dict:
    """Commits every loaded session when asked, then embeds every turn (of all sets at once); returns the times."""
    from django.db import connection

    timings: dict = {}
    if commit:
        from sessions_app.models import ChatSession
        from sessions_app.services import session_commit

        committed = time.perf_counter()
        for session in ChatSession.objects.all():
            session_commit(session=session)
        timings["commit_seconds"] = round(time.perf_counter() - committed, 1)
        print(f"committed every session in {timings['commit_seconds']} s")
    embedded, seconds = embed_all()
    timings["embed_seconds"] = round(seconds, 1)
    print(f"embedded {embedded} rows in {seconds:.1f} s ({embedded / max(seconds, 1e-9):.0f}/s)")
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--set", dest="set_name", choices=(*SETS, "both"), default="both", help="which set to ask")
    parser.add_argument("--strategies", default="default", help="comma-separated, e.g. dense,keyword,bm25,blend,rrf")
    parser.add_argument("--conversations", type=int, default=None, help="use the first N conversations of each set")
    parser.add_argument("--questions", type=int, default=None, help="use the first N questions of each")
    parser.add_argument("--json", dest="json_path", default=None, help="write the results here")
    parser.add_argument("--database", default="recollect_bench_recall")
    parser.add_argument(
        "--commit", action="store_true", help="commit every session (archives with L0/L1, memories) before asking"
    )
    args = parser.parse_args()

    names = list(SETS) if args.set_name == "both" else [args.set_name]
    chosen: dict[str, tuple[list[dict], dict[str, list[dict]]]] = {}
    for name in names:
        problems = SETS[name].check()
        if problems:
            sys.exit(f"the {name} set does not check out:\n" + "\n".join(problems))
        conversations = SETS[name].conversations()[: args.conversations]
        chosen[name] = (
            conversations,
            {c["id"]: SETS[name].questions(c["id"])[: args.questions] for c in conversations},
        )

    # Nothing here needs a worker: turns are embedded below, and no session is long enough to be folded or
    # committed, but say so rather than depend on the defaults.
    os.environ.setdefault("AUTO_COMMIT_TURNS", "0")
    os.environ.setdefault("ENABLE_HISTORY_SUMMARIZATION", "false")
    os.environ.setdefault("EMBEDDING_THREADS", "2")
    django_for_bench(args.database)
    from django.conf import settings

    from foundation.ai import active_embedding_model

    model = active_embedding_model() or settings.EMBEDDING_MODEL
    runs = {
        name: load_set(name, conversations, questions, model) for name, (conversations, questions) in chosen.items()
    }
    timings = commit_and_embed(commit=args.commit)
    strategies = [s.strip() for s in args.strategies.split(",") if s.strip()]
    for run in runs.values():
        report = run["report"]
        report.update(timings)
        report["results"], report["per_question"] = ask_all(strategies, run["loaded"], run["questions"])
    for run in runs.values():
        print_report(run["report"])
    if args.json_path:
        reports = {name: run["report"] for name, run in runs.items()}
        out = next(iter(reports.values())) if len(reports) == 1 else reports
        Path(args.json_path).write_text(json.dumps(out, indent=2, default=str) + "\n", encoding="utf-8")
        print(f"wrote {args.json_path}")


if __name__ == "__main__":
    main()
