"""The workers' embedding jobs, for every kind of row an app registered (see ``embedding``). They take
ids, re-fetch the rows and are idempotent."""

from __future__ import annotations

from celery import shared_task

from retrieval_app.core import embedding
from retrieval_app.core.ai import EmbeddingError
from retrieval_app.core.queues import enqueue_on_commit

EMBED_ROWS = "core.embed_rows"
BACKFILL_EMBEDDINGS = "core.backfill_embeddings"
RETRY = {"autoretry_for": (EmbeddingError,), "retry_backoff": 5, "retry_backoff_max": 300, "max_retries": 6}


@shared_task(name=EMBED_ROWS, **RETRY)
def embed_rows(kind: str, ids: list) -> int:
    """Embeds these rows of one kind (``messages``, ``archives``, ``memories``...)."""
    return embedding.embed_ids(kind=kind, ids=ids)


@shared_task(name=BACKFILL_EMBEDDINGS, **RETRY)
def backfill_embeddings(batch_size: int = 64, restale: bool = False) -> dict[str, int]:
    """Embeds every registered row still without a vector from the configured model."""
    return embedding.embeddings_backfill(batch_size=batch_size, restale=restale)


def embed_later(*, kind: str, ids: list) -> None:
    """Embeds the rows in a worker once the current transaction commits; a broker outage loses
    nothing (``manage.py backfill_embeddings`` catches up)."""
    if ids:
        enqueue_on_commit(EMBED_ROWS, kind, list(ids))
