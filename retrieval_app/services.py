"""Writes for retrieval: embedding rows of any embedded model, and (later) recording search traces."""

from __future__ import annotations

from collections.abc import Callable

from django.db import transaction
from django.db.models import Q, QuerySet

from retrieval_app import ai


def embed_rows(
    *,
    queryset: QuerySet,
    text_of: Callable[[object], str],
    purpose: str,
    text_fields: tuple[str, ...],
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
        owners = {getattr(row, "owner_id", None) for row in batch}
        vectors, made_by = ai.embed_texts(
            [text_of(row) for row in batch], purpose=purpose, owner_id=owners.pop() if len(owners) == 1 else None
        )
        rows = queryset.model.objects
        with transaction.atomic():
            for row, vector in zip(batch, vectors, strict=True):
                unchanged = {field: getattr(row, field) for field in text_fields}
                done += rows.filter(pk=row.pk, **unchanged).update(embedding=vector, embedding_model=made_by)
        last_pk = batch[-1].pk
        if progress:
            progress(len(batch))


def count_unembedded(*, queryset: QuerySet, restale: bool = False) -> int:
    model = ai.active_embedding_model()
    stale = Q(embedding__isnull=True) | ~Q(embedding_model=model) if restale else Q(embedding__isnull=True)
    return queryset.filter(stale).count()
