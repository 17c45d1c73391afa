"""Reads for retrieval: nearest-neighbour search over any embedded model, and search traces."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from django.conf import settings
from django.db.models import F, FloatField, QuerySet, Value
from django.db.models.functions import Cast
from pgvector.django import CosineDistance

from retrieval_app.models import SearchTrace


def nearest_neighbours(
    *,
    queryset: QuerySet,
    embedding: Sequence[float],
    model_name: str,
    limit: int,
    field: str = "embedding",
) -> list:
    """The ``limit`` rows of ``queryset`` nearest to ``embedding`` by cosine distance, nearest first.

    Each row carries ``distance`` (0 identical, 2 opposite). Only rows embedded by ``model_name`` are
    compared. The filter in ``queryset`` (an owner, an agent, a URI subtree) never costs results:
    when it leaves at most ``VECTOR_EXACT_SCAN_MAX_ROWS`` rows they are ranked exactly, which for so
    few rows is also fast. Above that the HNSW index answers, with pgvector's iterative scan (set on
    every connection) walking on until enough rows pass the filter; should it still come back short
    (its scan limit reached on a very selective filter), the rows are ranked exactly after all.
    """
    candidates = queryset.filter(**{f"{field}__isnull": False, "embedding_model": model_name}).annotate(
        distance=CosineDistance(field, list(embedding))
    )
    cap = settings.VECTOR_EXACT_SCAN_MAX_ROWS
    if candidates.order_by().values("pk")[: cap + 1].count() > cap:
        found = list(candidates.order_by(F("distance").asc())[:limit])
        if len(found) == limit:
            return found
    # Adding zero keeps the sort key from matching the HNSW operator, so PostgreSQL ranks the
    # filtered rows exactly instead of walking the graph past other tenants' rows.
    return list(candidates.order_by(Cast(F("distance") + Value(0.0), FloatField()).asc())[:limit])


def session_summary_text(context: Mapping[str, Any] | None) -> str:
    """The archive summary a search takes from a session context (seed 000's consumer rule): its
    ``summary`` when present and non-empty, else its ``summaries`` joined, else nothing."""
    from sessions_app.selectors import SUMMARY_SEPARATOR

    if not context:
        return ""
    summary = context.get("summary")
    if isinstance(summary, str) and summary.strip():
        return summary
    summaries = [s for s in context.get("summaries") or [] if isinstance(s, str) and s.strip()]
    return SUMMARY_SEPARATOR.join(summaries)


def search_trace_list(*, owner) -> QuerySet[SearchTrace]:
    return SearchTrace.objects.filter(owner=owner).order_by("-created_at")
