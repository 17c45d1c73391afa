"""Writes for retrieval: embedding rows of any embedded model, and (later) recording search traces."""

from __future__ import annotations

from collections.abc import Callable

from django.db.models import Q, QuerySet

from retrieval_app import ai


def embed_rows(
    *,
    queryset: QuerySet,
    text_of: Callable[[object], str],
    purpose: str,
    batch_size: int = 64,
    restale: bool = False,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Embeds the rows of ``queryset`` that have no vector from the configured model, a batch at a time.

    Idempotent: rows already embedded by the configured model are skipped, so a retried or duplicated
    task does no work twice. With ``restale``, rows embedded by another model are re-embedded too (a
    model change). Raises ``ai.EmbeddingError`` if the backend fails; batches done before stay done.
    Returns the number of rows embedded; ``progress`` is told after each batch.
    """
    model = ai.active_embedding_model()
    stale = Q(embedding__isnull=True) | ~Q(embedding_model=model) if restale else Q(embedding__isnull=True)
    pending = queryset.filter(stale).defer("embedding").order_by("pk")
    done, last_pk = 0, None
    while True:
        batch = list((pending.filter(pk__gt=last_pk) if last_pk is not None else pending)[:batch_size])
        if not batch:
            return done
        owner_id = getattr(batch[0], "owner_id", None)
        vectors, made_by = ai.embed_texts([text_of(row) for row in batch], purpose=purpose, owner_id=owner_id)
        for row, vector in zip(batch, vectors, strict=True):
            row.embedding, row.embedding_model = vector, made_by
        queryset.model.objects.bulk_update(batch, ["embedding", "embedding_model"])
        done += len(batch)
        last_pk = batch[-1].pk
        if progress:
            progress(len(batch))


def count_unembedded(*, queryset: QuerySet, restale: bool = False) -> int:
    model = ai.active_embedding_model()
    stale = Q(embedding__isnull=True) | ~Q(embedding_model=model) if restale else Q(embedding__isnull=True)
    return queryset.filter(stale).count()
