"""Document ingestion benchmark: upload to ready, end to end, for 5,000 short documents and 50 long ones
(100+ pages each, 10 of them PDF), beside the raw throughput of the embedding model on the same
machine in the same run.

    .venv/bin/python bench/ingest.py            # full corpus (about 25 minutes on 2 cores)
    .venv/bin/python bench/ingest.py --small    # 500 short and 5 long documents
    .venv/bin/python bench/ingest.py --workers [--small]   # uploaded through the API to the run command's stack

Indexing runs in this process as a worker would run it (services.document_index), with the local
model on EMBEDDING_THREADS threads (2 here: one process using both cores). With ``--workers`` the
documents are uploaded through the API to the run command's stack instead (web processes, the bulk
worker), one person's upload as it comes, and timed from the first upload to the last document ready.
The time spent inside the embedding model is measured apart, so the report says what share of the time
everything else (parsing, chunking, tiers, accounting, database) takes.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import time
import urllib.request
import uuid

from _setup import django_for_bench, stack_env, stack_start, stack_stop

WORDS = [
    "pump",
    "valve",
    "pressure",
    "schedule",
    "supplier",
    "warehouse",
    "invoice",
    "contract",
    "clause",
    "delivery",
    "inspection",
    "maintenance",
    "warranty",
    "audit",
    "budget",
    "forecast",
    "migration",
    "cluster",
    "latency",
    "replica",
    "backup",
    "policy",
    "retention",
    "incident",
    "customer",
    "onboarding",
    "roadmap",
    "release",
    "training",
    "safety",
    "compliance",
]


def paragraph(rng: random.Random, sentences: int) -> str:
    out = []
    for _ in range(sentences):
        words = rng.sample(WORDS, 6)
        out.append(
            f"The {words[0]} {words[1]} for {words[2]} {rng.randint(2, 999)} depends on the {words[3]} "
            f"{words[4]} and the {words[5]} review of week {rng.randint(1, 52)}."
        )
    return " ".join(out)


def short_doc(rng: random.Random, index: int) -> tuple[str, bytes]:
    body = "\n\n".join(paragraph(rng, rng.randint(3, 6)) for _ in range(rng.randint(2, 5)))
    return f"note-{index:05d}.md", f"# Note {index}\n\n{body}\n".encode()


def long_doc(rng: random.Random, index: int, pages: int = 110) -> tuple[str, list[str]]:
    """``pages`` pages of about 450 words, as chapters of 10 pages."""
    return f"manual-{index:03d}", ["\n\n".join(paragraph(rng, 5) for _ in range(4)) for _ in range(pages)]


def as_markdown(pages: list[str]) -> bytes:
    chapters = [f"## Chapter {n // 10 + 1}, part {n % 10 + 1}\n\n{text}" for n, text in enumerate(pages)]
    return ("# Operations manual\n\n" + "\n\n".join(chapters)).encode()


def as_pdf(pages: list[str]) -> bytes:
    import io

    from reportlab.lib.pagesizes import A4
    from reportlab.lib.styles import getSampleStyleSheet
    from reportlab.platypus import PageBreak, Paragraph, SimpleDocTemplate

    buffer = io.BytesIO()
    style = getSampleStyleSheet()["BodyText"]
    story = []
    for text in pages:
        story += [Paragraph(p, style) for p in text.split("\n\n")] + [PageBreak()]
    SimpleDocTemplate(buffer, pagesize=A4).build(story)
    return buffer.getvalue()


def through_workers(owner, label: str, docs: list[tuple[str, bytes]]) -> dict:
    """Uploads ``docs`` through the API of a stack on this database and waits until all are ready."""

    from rest_framework.authtoken.models import Token

    from documents_app.models import Document, DocumentNode

    env = stack_env()
    env.pop("EMBEDDING_THREADS", None)  # the stack's own choice for its workers
    port = 8767
    stack = stack_start(port=port, env=env)
    base = f"http://127.0.0.1:{port}"
    token = Token.objects.get_or_create(user=owner)[0].key
    try:
        time.sleep(5)  # the workers warm up
        started = time.perf_counter()
        for filename, data in docs:
            boundary = uuid.uuid4().hex
            head = f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{filename}"\r\n\r\n'
            request = urllib.request.Request(  # noqa: S310 (loopback)
                f"{base}/api/documents/upload",
                data=head.encode() + data + f"\r\n--{boundary}--\r\n".encode(),
                headers={
                    "Authorization": f"Token {token}",
                    "Content-Type": f"multipart/form-data; boundary={boundary}",
                },
            )
            urllib.request.urlopen(request, timeout=60).read()  # noqa: S310
        uploaded = time.perf_counter() - started
        names = [name for name, _ in docs]
        while Document.objects.filter(owner=owner, filename__in=names).exclude(status__in=["ready", "failed"]).exists():
            time.sleep(0.5)
        elapsed = time.perf_counter() - started
    finally:
        stack_stop(stack)
    nodes = DocumentNode.objects.filter(document__owner=owner, document__filename__in=names)
    return {
        "documents": len(docs),
        "failed": Document.objects.filter(owner=owner, filename__in=names, status="failed").count(),
        "uploaded_in_s": round(uploaded, 1),
        "seconds": round(elapsed, 1),
        "documents_per_s": round(len(docs) / elapsed, 2),
        "texts_embedded_per_s": round(nodes.count() / elapsed, 1),
        "chunks_per_s": round(nodes.filter(kind="chunk").count() / elapsed, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--workers", action="store_true", help="upload through the API to the run command's stack")
    args = parser.parse_args()
    shorts, longs, pdfs = (500, 5, 1) if args.small else (5000, 50, 10)
    os.environ.setdefault("EMBEDDING_THREADS", "2")
    django_for_bench("recollect_bench_docs")

    from django.contrib.auth import get_user_model

    from documents_app import services
    from documents_app.models import DocumentNode
    from foundation import ai
    from foundation.ai.embeddings import embedding_backend

    owner = get_user_model().objects.create_user("bench-docs")
    rng = random.Random(11)
    corpus = [short_doc(rng, i) for i in range(shorts)]
    long_corpus = []
    for i in range(longs):
        name, pages = long_doc(rng, i)
        long_corpus.append((f"{name}.pdf", as_pdf(pages)) if i < pdfs else (f"{name}.md", as_markdown(pages)))

    model_seconds = 0.0
    original = ai.embed_texts

    def timed(texts, **kwargs):
        nonlocal model_seconds
        started = time.perf_counter()
        try:
            return original(texts, **kwargs)
        finally:
            model_seconds += time.perf_counter() - started

    ai.embed_texts = timed
    report = {"embedding_model": ai.active_embedding_model(), "threads": int(os.environ["EMBEDDING_THREADS"])}
    if args.workers:
        for label, docs in (("short", corpus), ("long", long_corpus)):
            report[label] = through_workers(owner, label, docs)
            print(label, report[label], flush=True)
    for label, docs in () if args.workers else (("short", corpus), ("long", long_corpus)):
        model_seconds = 0.0
        nodes_before = DocumentNode.objects.count()
        started = time.perf_counter()
        for filename, data in docs:
            document, _ = services.document_upload(owner=owner, filename=filename, data=data, enqueue=False)
            result = services.document_index(document_id=document.id)
            assert result.status == "ready", (filename, result.error)
        elapsed = time.perf_counter() - started
        nodes = DocumentNode.objects.count() - nodes_before
        chunks = DocumentNode.objects.filter(kind="chunk", document__filename__in=[f for f, _ in docs]).count()
        report[label] = {
            "documents": len(docs),
            "megabytes": round(sum(len(d) for _, d in docs) / 1e6, 1),
            "nodes": nodes,
            "chunks": chunks,
            "seconds": round(elapsed, 1),
            "documents_per_s": round(len(docs) / elapsed, 2),
            "chunks_per_s": round(chunks / elapsed, 1),
            "share_outside_the_model": round(1 - model_seconds / elapsed, 3),
        }
    ai.embed_texts = original

    # The model alone, on the same texts the index embedded, with the same threads and batches.
    sample = list(
        DocumentNode.objects.filter(kind="chunk", document__filename__endswith=".md")
        .order_by("?")
        .values_list("title", "content")[:800]
    )
    texts = [f"{title}\n{content}" for title, content in sample]
    report["texts_embedded"] = len(texts)
    backend = embedding_backend()
    backend.embed(texts[:16])
    started = time.perf_counter()
    backend.embed(texts)
    report["model_alone_chunks_per_s"] = round(len(texts) / (time.perf_counter() - started), 1)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
