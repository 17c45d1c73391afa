"""The one writer of vectors. Each app registers the kinds of rows it embeds (``Embeddable``); the
workers, the backfill command and the tests embed any of them the same way.

Writes are idempotent: a row already embedded by the configured model is skipped, and a row whose
text changed while its vector was being made is left for the next run, never given a stale vector.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import timedelta

from django.core.cache import cache
from django.db import transaction
from django.db.models import Q, QuerySet
from django.utils import timezone

from foundation import ai
from foundation.accounting import calls_for_session

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Embeddable:
    """A kind of row that carries a vector: its rows, the text the vector is made from, and the fields
    that text comes from (a row whose fields changed meanwhile is not written)."""

    name: str
    rows: Callable[[], QuerySet]
    text_of: Callable[[object], str]
    text_fields: tuple[str, ...]
    purpose: str
    # Texts for a whole batch at once, for a kind whose text needs its neighbours (a message and the
    # turn before it): one query per batch rather than one per row.
    texts_of: Callable[[list], list[str]] | None = None
    # When a row was written, for the catch-up of rows whose embedding job was lost (see
    # ``embeddings_catch_up``); None for a kind embedded as part of its own work (document nodes).
    written_at: str | None = None

    def texts(self, rows: list) -> list[str]:
        return self.texts_of(rows) if self.texts_of else [self.text_of(row) for row in rows]


_KINDS: dict[str, Embeddable] = {}


def embeddable_register(kind: Embeddable) -> None:
    """Called by each app when it is ready; registering the same name again replaces it."""
    _KINDS[kind.name] = kind


def embeddables() -> list[Embeddable]:
    return list(_KINDS.values())


def embeddable_get(name: str) -> Embeddable:
    try:
        return _KINDS[name]
    except KeyError as exc:
        raise LookupError(f"No embeddable kind {name!r}; known: {', '.join(sorted(_KINDS))}.") from exc


def embed_rows(
    *,
    queryset: QuerySet,
    text_of: Callable[[object], str] | None = None,
    texts_of: Callable[[list], list[str]] | None = None,
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
    pending = queryset.filter(_stale(restale)).defer("embedding").order_by("pk")
    done, last_pk = 0, None
    while True:
        batch = list((pending.filter(pk__gt=last_pk) if last_pk is not None else pending)[:batch_size])
        if not batch:
            return done
        owners = {getattr(row, "owner_id", None) for row in batch}
        sessions = {getattr(row, "session_id", None) for row in batch}
        texts = texts_of(batch) if texts_of else [text_of(row) for row in batch]
        # A batch of one conversation's turns (the usual case: one recording) is that conversation's cost.
        with calls_for_session(sessions.pop() if len(sessions) == 1 else None):
            vectors, made_by = ai.embed_texts(
                texts, purpose=purpose, owner_id=owners.pop() if len(owners) == 1 else None
            )
        rows = queryset.model.objects
        with transaction.atomic():
            for row, vector in zip(batch, vectors, strict=True):
                unchanged = {field: getattr(row, field) for field in text_fields}
                done += rows.filter(pk=row.pk, **unchanged).update(embedding=vector, embedding_model=made_by)
        last_pk = batch[-1].pk
        if progress:
            progress(len(batch))


def _stale(restale: bool) -> Q:
    """Rows without a vector; with ``restale``, also rows whose vector another model made."""
    missing = Q(embedding__isnull=True)
    return missing | ~Q(embedding_model=ai.active_embedding_model()) if restale else missing


def count_unembedded(*, queryset: QuerySet, restale: bool = False) -> int:
    return queryset.filter(_stale(restale)).count()


# How long a process that took a row to embed keeps it to itself: far longer than embedding a few rows.
CLAIM_TTL_S = 30


def embedding_claims(*, kind: str, ids: Sequence) -> list:
    """The rows among ``ids`` no other process has taken to embed in the last CLAIM_TTL_S, now taken by
    this one (Redis ``SET NX`` per row). When a burst of turns each finds the same just-written messages
    without vectors, each is embedded once rather than once per turn. Redis down: all of them."""
    claimed = []
    for row_id in ids:
        try:
            if not cache.add(f"embedding-claim:{kind}:{row_id}", 1, CLAIM_TTL_S):
                continue
        except Exception:  # no Redis: embedding twice is wasted work, never wrong
            logger.debug("could not claim %s %s for embedding", kind, row_id, exc_info=True)
        claimed.append(row_id)
    return claimed


def embed_ids(*, kind: str, ids: list, batch_size: int = 64) -> int:
    """Embeds the rows of one registered kind with these primary keys (those still without a vector)."""
    spec = embeddable_get(kind)
    return embed_rows(
        queryset=spec.rows().filter(pk__in=ids),
        texts_of=spec.texts,
        text_fields=spec.text_fields,
        purpose=spec.purpose,
        batch_size=batch_size,
    )


def embeddings_backfill(
    *,
    batch_size: int = 64,
    restale: bool = False,
    progress: Callable[[Embeddable, int], Callable[[int], None] | None] | None = None,
) -> dict[str, int]:
    """Embeds every registered row still without a vector from the configured model (with ``restale``,
    also those made by another model). ``progress(kind, total)`` may return a callback told after
    each batch. Returns the rows embedded per kind."""
    done = {}
    for spec in embeddables():
        rows = spec.rows()
        tick = progress(spec, count_unembedded(queryset=rows, restale=restale)) if progress else None
        done[spec.name] = embed_rows(
            queryset=rows,
            texts_of=spec.texts,
            text_fields=spec.text_fields,
            purpose="backfill",
            batch_size=batch_size,
            restale=restale,
            progress=tick,
        )
    return done


def embeddings_catch_up(*, older_than_s: float = 30.0, max_rows: int = 256) -> dict[str, int]:
    """Embeds rows written more than ``older_than_s`` ago and still without a vector, at most
    ``max_rows`` of each kind: a job lost with the broker (Redis killed while it held it) would
    otherwise leave its rows unfound by meaning until someone ran the backfill. The workers run it
    with every sweep; a failing model leaves the rows for the next one. Returns the rows embedded."""
    done = {}
    cutoff = timezone.now() - timedelta(seconds=older_than_s)
    for spec in embeddables():
        if spec.written_at is None:
            continue
        waiting = spec.rows().filter(embedding__isnull=True, **{f"{spec.written_at}__lt": cutoff})
        ids = list(waiting.order_by("pk").values_list("pk", flat=True)[:max_rows])
        if ids:
            done[spec.name] = embed_ids(kind=spec.name, ids=ids)
    return done
