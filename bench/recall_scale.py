"""Recall at scale: one person's million messages among many people's, server-side, the question's
embedding included.

    .venv/bin/python bench/recall_scale.py [--messages 1000000] [--others 20] [--each 10000] [--queries 100]
    .venv/bin/python bench/recall_scale.py --reuse      # time against the rows a previous run loaded,
                                                        # loading the rest first if it was cut short
    .venv/bin/python bench/recall_scale.py --reuse --seed 18   # other questions, e.g. to measure a
                                                               # database server already warm

Rows are loaded as in ``bench/retrieval_latency.py`` (real embeddings of distinct sentences reused with a
little noise) into a database of its own (``recollect_bench_recall_scale``): ``--messages`` for the person
asking and ``--each`` for each of ``--others`` people, in sessions of 50. Each question is a fresh sentence,
embedded for real inside the timed call (``memory_recall``, what ``POST /api/memory/recall`` runs), after
the process has warmed up as a web process does and asked ten warm-up questions. Reported: p50/p95/max in
milliseconds, and the recall's own stages (embedding, the retrievers, fusion) from its traces.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

from pgvector.django import HnswIndex

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench._setup import django_for_bench, percentiles

DATABASE = "recollect_bench_recall_scale"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=1_000_000)
    parser.add_argument("--others", type=int, default=20)
    parser.add_argument("--each", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--reuse", action="store_true")
    parser.add_argument("--seed", type=int, default=17, help="which questions are asked")
    args = parser.parse_args()

    django_for_bench(DATABASE, fresh=not args.reuse)
    from django.contrib.auth import get_user_model
    from django.db import connection

    from bench.sessions import VectorPool, load_messages, sentence
    from foundation.warmup import warm_up
    from retrieval_app.models import SearchTrace
    from retrieval_app.recall import memory_recall
    from sessions_app.models import Message

    users = get_user_model()
    rng = random.Random(17)
    started, pool = time.perf_counter(), None
    owner = users.objects.get_or_create(username="bench")[0]
    # A run cut short is carried on where it stopped: a reused database is filled up to --messages for
    # the person asking and --each for each of the --others.
    others = [users.objects.get_or_create(username=f"other-{number}")[0] for number in range(args.others)]
    others_missing = [(other, args.each - Message.objects.filter(owner=other).count()) for other in others]
    others_missing = [(other, missing) for other, missing in others_missing if missing > 0]
    loaded, step = Message.objects.filter(owner=owner).count(), 100_000
    if others_missing or loaded < args.messages:
        pool = VectorPool(rng, 3000)
        # Loaded without the vector index, which is built once at the end: inserting into a graph that
        # grows is several times slower than building it once (pgvector's own advice for a bulk load).
        _vector_index(connection, present=False)
    for other, missing in others_missing:
        load_messages(other, missing, pool)
    if others_missing:
        print(f"  the others' messages loaded ({time.perf_counter() - started:.0f} s)", flush=True)
    if loaded < args.messages:
        for done in range(loaded, args.messages, step):
            load_messages(owner, min(step, args.messages - done), pool)
            print(
                f"  {min(done + step, args.messages)} of the person's messages loaded "
                f"({time.perf_counter() - started:.0f} s)",
                flush=True,
            )
    # Also after a load cut short between dropping the index and building it again.
    built = _vector_index(connection, present=True)
    if built:
        print(f"  vector index built ({time.perf_counter() - started:.0f} s)", flush=True)
    if built or loaded < args.messages or others_missing:
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE sessions_app_message")
    print(
        f"{Message.objects.filter(owner=owner).count()} messages of the person asking, "
        f"{Message.objects.exclude(owner=owner).count()} of {users.objects.count() - 1} others",
        flush=True,
    )
    warm_up()  # as a web process does when it starts
    for warm in range(10):
        memory_recall(owner=owner, query=sentence(random.Random(900 + warm)))
    timings = []
    # Questions of their own generator: with --reuse (nothing left to load) the default seed asks what
    # earlier runs asked, and another seed asks questions the server has not seen.
    asking = random.Random(args.seed)
    began = time.perf_counter()
    for _ in range(args.queries):
        question = sentence(asking)
        started = time.perf_counter()
        found = memory_recall(owner=owner, query=question)
        timings.append((time.perf_counter() - started) * 1000)
        assert found["count"], "every question finds something at this scale"
    print(f"recall, question embedded inside (ms): {percentiles(timings)}", flush=True)
    print(f"throughput: {args.queries / (time.perf_counter() - began):.1f} recalls/s (one at a time)")
    stages: dict[str, list[float]] = {}
    for trace in SearchTrace.objects.filter(owner=owner, kind="recall").order_by("-created_at")[: args.queries]:
        for name, ms in (trace.timings or {}).items():
            if isinstance(ms, (int, float)):
                stages.setdefault(name, []).append(ms)
    for name, values in sorted(stages.items(), key=lambda item: -statistics.median(item[1])):
        print(f"  stage {name:14s} p50 {statistics.median(values):6.1f} ms")


def _vector_index(connection, *, present: bool) -> bool:
    """Makes the messages' vector index present or absent, as the model defines it; whether it changed."""
    from sessions_app.models import Message  # after django_for_bench has set Django up

    index = next(index for index in Message._meta.indexes if isinstance(index, HnswIndex))
    with connection.cursor() as cursor:
        cursor.execute("SELECT 1 FROM pg_indexes WHERE indexname = %s", [index.name])
        if (cursor.fetchone() is not None) == present:
            return False
        if present:  # a build takes minutes: longer than any statement of the product may
            cursor.execute("SET maintenance_work_mem = '2GB'")
            cursor.execute("SET statement_timeout = 0")
    with connection.schema_editor() as editor:
        (editor.add_index if present else editor.remove_index)(Message, index)
    return True


if __name__ == "__main__":
    main()
