"""Nearest-neighbour search over any embedded model, which never loses results to a filter."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.db.models import Case, ExpressionWrapper, FloatField, QuerySet, Value, When
from pgvector import Vector
from pgvector.django import CosineDistance

from foundation import caching

# How long whether a filter leaves more than a cap of rows is remembered.
ROWS_TTL_S = 300
# Query vectors whose SQL form is kept: a turn compares its one or two vectors in a dozen statements.
VECTOR_TEXTS_KEPT = 64


@lru_cache(maxsize=VECTOR_TEXTS_KEPT)
def _vector_text(values: tuple[float, ...]) -> str:
    return Vector(list(values)).to_text()


def vector_text(embedding: Sequence[float]) -> str:
    """``embedding`` in the text form PostgreSQL reads as a ``vector``: built once per query vector and
    reused, since writing out 384 numbers costs more than a comparison."""
    return _vector_text(tuple(embedding))


def cosine_to(embedding: Sequence[float], field: str = "embedding") -> CosineDistance:
    """``field``'s cosine distance to ``embedding``."""
    return CosineDistance(field, Value(vector_text(embedding)))


def nearest_neighbours(
    *,
    queryset: QuerySet,
    embedding: Sequence[float],
    model_name: str,
    limit: int,
    field: str = "embedding",
    sized_by: QuerySet | None = None,
    key: str = "pk",
) -> list[tuple[Any, float]]:
    """The ``limit`` rows of ``queryset`` nearest to ``embedding`` by cosine distance, nearest first, as
    (``key``, distance) pairs: a distance is 0 for identical, 2 for opposite (plain values, since a turn
    ranks a few hundred rows and building a model object for each cost more than reading it).

    Only rows embedded by ``model_name`` are compared. The filter in ``queryset`` (an owner, an agent, a
    URI subtree) never costs results: when it leaves at most ``VECTOR_EXACT_SCAN_MAX_ROWS`` rows they are
    ranked exactly, which for so few rows is also fast. Above that the HNSW index answers, with pgvector's
    iterative scan (set on every connection) walking on until enough rows pass the filter; should it still
    come back short (its scan limit reached on a very selective filter), the rows are ranked exactly after
    all.

    ``sized_by`` is a broader filter whose size decides between the two, when ``queryset`` narrows it in
    a way that changes with every call (recall leaves out the asking session): its size is remembered,
    where the narrower one's would be counted again each time.
    """
    embedded = {f"{field}__isnull": False, "embedding_model": model_name}
    candidates = queryset.filter(**embedded)
    sized = candidates if sized_by is None else sized_by.filter(**embedded)
    distance = cosine_to(embedding, field)
    if has_more_rows_than(sized, settings.VECTOR_EXACT_SCAN_MAX_ROWS):
        found = list(candidates.annotate(distance=distance).order_by("distance").values_list(key, "distance")[:limit])
        if len(found) == limit:
            return found
    # Sorting by distance + 0 keeps the sort key from matching the HNSW operator, so PostgreSQL ranks
    # the filtered rows exactly instead of walking the graph past other tenants' rows; the same
    # expression in the select list means it is computed once per row.
    exact = ExpressionWrapper(distance + Value(0.0), output_field=FloatField())
    return list(candidates.annotate(distance=exact).order_by("distance").values_list(key, "distance")[:limit])


def has_more_rows_than(queryset: QuerySet, cap: int) -> bool:
    """Whether the filter leaves more than ``cap`` rows; remembered for a few minutes per filter.

    A stale answer costs speed, never results: a filter that grew past the cap is still ranked
    exactly, and one that shrank falls back to the exact ranking when the index comes back short.
    """
    sql, params = queryset.order_by().values("pk").query.sql_with_params()
    key = "nn-rows:" + hashlib.sha256(f"{cap}|{sql}|{params}".encode()).hexdigest()
    return caching.remembered(key, lambda: queryset.order_by().values("pk")[: cap + 1].count() > cap, ttl=ROWS_TTL_S)


def cosine_distance(embedding: Sequence[float], model_name: str, field: str = "embedding") -> Case:
    """Each row's cosine distance to ``embedding``, or NULL for a row without a vector of that model
    (vectors of two models are never compared)."""
    return Case(
        When(embedding_model=model_name, **{f"{field}__isnull": False}, then=cosine_to(embedding, field)),
        default=None,
        output_field=FloatField(),
    )
