"""Server-side latency of find() and search() with 100k chunks and 100k messages for one user.

Rows are loaded directly (documents of 8 sections of 50 chunks each, sessions of 50 messages), with
real embeddings of distinct sentences reused with a little noise, as in ``bench/sessions.py``: really
embedding 200k texts would take over an hour on two cores. Each query is a fresh sentence, embedded
for real inside the timed call, like every search.

    .venv/bin/python bench/retrieval_latency.py [--chunks 100000] [--messages 100000] [--queries 100]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._setup import django_for_bench, percentiles

SECTIONS, CHUNKS_PER_SECTION = 8, 50


def load_documents(owner, chunks: int, pool) -> None:
    from documents_app.models import Document, DocumentNode
    from documents_app.uris import document_uri

    per_document = SECTIONS * CHUNKS_PER_SECTION
    for number in range(0, chunks, per_document):
        doc_id = uuid.uuid4()
        document = Document.objects.create(
            id=doc_id,
            uri=document_uri(owner.id, doc_id),
            owner=owner,
            title=f"Operations log {number // per_document}",
            filename=f"ops-{number}.md",
            content_hash=uuid.uuid4().hex,
            status="ready",
        )
        root = document_uri(owner.id, document.id)
        count = SECTIONS * CHUNKS_PER_SECTION + SECTIONS + 1
        texts, vectors = pool.sample(count)
        rows = [
            DocumentNode(
                document=document,
                owner=owner,
                uri=root,
                kind="document",
                level=0,
                position=0,
                title=document.title,
                abstract=texts[0][:200],
                overview=texts[0],
                embedding=vectors[0],
                embedding_model=pool.model,
            )
        ]
        index = 1
        for section in range(SECTIONS):
            section_uri = f"{root}/section_{section + 1:03d}"
            rows.append(
                DocumentNode(
                    document=document,
                    owner=owner,
                    uri=section_uri,
                    parent_uri=root,
                    kind="section",
                    level=1,
                    position=section,
                    title=f"Week {section + 1}",
                    abstract=texts[index][:200],
                    overview=texts[index],
                    embedding=vectors[index],
                    embedding_model=pool.model,
                )
            )
            index += 1
            for chunk in range(CHUNKS_PER_SECTION):
                rows.append(
                    DocumentNode(
                        document=document,
                        owner=owner,
                        uri=f"{section_uri}/chunk_{chunk + 1:04d}",
                        parent_uri=section_uri,
                        kind="chunk",
                        level=2,
                        position=chunk,
                        abstract=texts[index][:120],
                        overview=texts[index],
                        content=texts[index],
                        embedding=vectors[index],
                        embedding_model=pool.model,
                    )
                )
                index += 1
        DocumentNode.objects.bulk_create(rows, batch_size=2000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chunks", type=int, default=100_000)
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--reuse", action="store_true", help="time against the rows a previous run loaded")
    args = parser.parse_args()

    django_for_bench("recollect_bench_retrieval", fresh=not args.reuse)
    from django.contrib.auth import get_user_model
    from django.db import connection

    from bench.sessions import VectorPool, load_messages, sentence
    from foundation.warmup import warm_up
    from retrieval_app.services import SearchOptions, retrieval_find, retrieval_search
    from sessions_app import services

    rng = random.Random(7)
    User = get_user_model()
    if args.reuse:
        owner = User.objects.get(username="bench")
    else:
        owner = User.objects.create_user(username="bench")
        pool = VectorPool(rng, 3000)
        started = time.perf_counter()
        load_documents(owner, args.chunks, pool)
        print(f"loaded {args.chunks} chunks in {time.perf_counter() - started:.0f} s", flush=True)
        started = time.perf_counter()
        load_messages(owner, args.messages, pool)
        print(f"loaded {args.messages} messages in {time.perf_counter() - started:.0f} s", flush=True)
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")
    from documents_app.models import DocumentNode
    from sessions_app.models import Message

    print(
        f"{DocumentNode.objects.filter(owner=owner, kind='chunk').count()} chunks,"
        f" {Message.objects.filter(owner=owner).count()} messages",
        flush=True,
    )

    warm_up()  # as a web process does when it starts
    session = services.session_create(owner=owner, title="bench")
    services.message_bulk_create(
        session=session,
        messages=[
            services.NewMessage(role="user", content="What happened to the billing service last week?"),
            services.NewMessage(role="assistant", content="The billing service failed over twice; OPS-4242."),
        ],
    )
    queries = [sentence(rng) for _ in range(args.queries)]
    followups = ["what caused it?", "and the week after?", "how was that fixed?", "who owns it?"]
    results = {}
    for name, call in {
        "find (hierarchical)": lambda q: retrieval_find(owner=owner, query=q, options=SearchOptions()),
        "find (flat hybrid)": lambda q: retrieval_find(owner=owner, query=q, options=SearchOptions(mode="flat")),
        "search (standalone query)": lambda q: retrieval_search(owner=owner, query=q, session=session),
    }.items():
        # Warm the model, the connection and PostgreSQL's caches: the figures are for a server that has
        # been answering, not its first queries after a restart (those can take ten times as long).
        for warm in range(10):
            call(sentence(random.Random(1000 + warm)))
        timings = []
        for query in queries:
            begun = time.perf_counter()
            call(query)
            timings.append((time.perf_counter() - begun) * 1000)
        results[name] = percentiles(timings)
        print(f"{name:28s} {results[name]}", flush=True)
    timings = []
    for number in range(args.queries):
        begun = time.perf_counter()
        retrieval_search(owner=owner, query=followups[number % len(followups)], session=session)
        timings.append((time.perf_counter() - begun) * 1000)
    results["search (rewritten follow-up)"] = percentiles(timings)
    print(f"{'search (rewritten follow-up)':28s} {results['search (rewritten follow-up)']}", flush=True)


if __name__ == "__main__":
    main()
