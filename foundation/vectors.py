"""Nearest-neighbour search over any embedded model, which never loses results to a filter."""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import lru_cache
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import Case, FloatField, QuerySet, Value, When
from pgvector import Vector
from pgvector.django import CosineDistance

from foundation import caching
from foundation.db import filter_sql

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
    sized = queryset if sized_by is None else sized_by
    select, vector, rest, params = _nearest_sql(queryset, model_name=model_name, field=field, key=key)
    params = [vector_text(embedding), *params, limit]
    with connection.cursor() as cursor:
        embedded = {f"{field}__isnull": False, "embedding_model": model_name}
        if has_more_rows_than(sized, settings.VECTOR_EXACT_SCAN_MAX_ROWS, **embedded):
            cursor.execute(f"{select} {vector} <=> %s::vector{rest}", params)
            found = cursor.fetchall()
            if len(found) == limit:
                return found
        # Sorting by distance + 0 keeps the sort key from matching the HNSW operator, so PostgreSQL ranks
        # the filtered rows exactly instead of walking the graph past other tenants' rows; the same
        # expression in the select list means it is computed once per row.
        cursor.execute(f"{select} ({vector} <=> %s::vector) + 0{rest}", params)
        return cursor.fetchall()


def _nearest_sql(queryset: QuerySet, *, model_name: str, field: str, key: str) -> tuple[str, str, str, list]:
    """The statement ranking ``queryset``'s rows embedded by ``model_name`` by their distance, in parts:
    what comes before the distance, the vector column, what follows it (ending in the limit), and the
    parameters between the query vector and the limit. Written by hand on the queryset's filter: building
    it through the ORM cost more than PostgreSQL takes to answer it."""
    meta = queryset.model._meta
    quote = connection.ops.quote_name
    table = quote(meta.db_table)
    column = meta.pk.column if key == "pk" else meta.get_field(key).column
    vector = f"{table}.{quote(meta.get_field(field).column)}"
    where, params = filter_sql(queryset)
    rest = (
        f" AS distance FROM {table} WHERE ({where}) AND {vector} IS NOT NULL"
        f" AND {table}.{quote(meta.get_field('embedding_model').column)} = %s ORDER BY distance LIMIT %s"
    )
    return f"SELECT {table}.{quote(column)},", vector, rest, [*params, model_name]


def has_more_rows_than(queryset: QuerySet, cap: int, **narrower: Any) -> bool:
    """Whether the filter, narrowed by the field lookups ``narrower`` (as for ``filter``), leaves more than
    ``cap`` rows; remembered for a few minutes per filter.

    A stale answer costs speed, never results: a filter that grew past the cap is still ranked
    exactly, and one that shrank falls back to the exact ranking when the index comes back short.
    """
    # Named by the filter's SQL (compiled once per queryset) and the narrowing: compiling the whole count
    # only to name it cost more than asking the cache.
    where, params = filter_sql(queryset)
    named = f"{cap}|{where}|{params}|{sorted(narrower.items())}"
    key = f"nn-rows:{queryset.model._meta.db_table}:" + hashlib.sha256(named.encode()).hexdigest()

    def count() -> bool:
        counted = queryset.filter(**narrower) if narrower else queryset
        return counted.order_by().values("pk")[: cap + 1].count() > cap

    return caching.remembered(key, count, ttl=ROWS_TTL_S)


def cosine_distance(embedding: Sequence[float], model_name: str, field: str = "embedding") -> Case:
    """Each row's cosine distance to ``embedding``, or NULL for a row without a vector of that model
    (vectors of two models are never compared)."""
    return Case(
        When(embedding_model=model_name, **{f"{field}__isnull": False}, then=cosine_to(embedding, field)),
        default=None,
        output_field=FloatField(),
    )
