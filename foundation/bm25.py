"""BM25 ranking over PostgreSQL's full-text columns, for any table with a ``search_vector``.

PostgreSQL's ``ts_rank`` counts how often and how close query words occur, but it does not weigh a
word by how rare it is in the collection: "Biscuit" (a dog's name said twice in a year) counts no
more than "work". BM25 does: each query stem is weighted by its inverse document frequency, term
frequency saturates (k1) and long texts are normalised (b).

The term statistics come from PostgreSQL itself, for the scope being searched (one owner, one
agent): the number of rows, their average length, and each stem's document frequency. Counts use
the GIN index and stop at KEYWORD_COMMON_ROWS: a stem found in that many rows says little, its weight is
near zero, and it is left out of the match (the dense side covers what such words mean). Statistics
are remembered for a few minutes per scope (``foundation.caching``); they drift slowly, so a stale one changes scores a
little, never which rows can be found: a stem counted in no row still takes part in the match,
weighted as the rarest word, so a word searched for before anyone wrote it is found the moment a
message holding it is written.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings
from django.db import connection
from django.db.models import QuerySet

from foundation import caching
from foundation.db import filter_sql

K1, B = 1.2, 0.75
SAMPLE_ROWS = 2000
STATS_TTL_S = 300


def _scope_sql(queryset: QuerySet, key: str = "pk") -> tuple[str, tuple]:
    """The scope as a subquery of (the row's key: its primary key or another unique column, and its
    ``search_vector``), written on the queryset's filter: the ORM took longer to build it than
    PostgreSQL to run it."""
    table = connection.ops.quote_name(queryset.model._meta.db_table)
    where, params = filter_sql(queryset)
    sql = f"SELECT {table}.{_key_column(queryset, key)}, {table}.search_vector FROM {table} WHERE {where}"  # noqa: S608
    return sql, tuple(params)


def _key_column(queryset: QuerySet, key: str = "pk") -> str:
    field = queryset.model._meta.pk if key == "pk" else queryset.model._meta.get_field(key)
    return connection.ops.quote_name(field.column)


def quoted(lexeme: str) -> str:
    """A stem as a tsquery literal."""
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


def _common_rows() -> int:
    return settings.KEYWORD_COMMON_ROWS


def collection_stats(queryset: QuerySet, scope: tuple[str, tuple] | None = None) -> tuple[int, float]:
    """The number of rows in scope and their average length in stems (sampled), in one round trip.
    ``scope`` is the queryset's SQL when the caller has it already."""
    sql, params = scope or _scope_sql(queryset)
    key = "bm25-scope:" + hashlib.sha256(f"{sql}|{params}".encode()).hexdigest()

    def compute() -> tuple[int, float]:
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT (SELECT count(*) FROM ({sql}) AS scope),"  # noqa: S608 (Django's own SQL)
                f" (SELECT avg(length(search_vector)) FROM (SELECT search_vector FROM ({sql}) AS scope LIMIT %s) s)",
                (*params, *params, SAMPLE_ROWS),
            )
            rows, average = cursor.fetchone()
        return rows, float(average or 1.0)

    return caching.remembered(key, compute, ttl=STATS_TTL_S)


def document_frequencies(
    queryset: QuerySet, lexemes: Sequence[str], scope: tuple[str, tuple] | None = None
) -> dict[str, int]:
    """How many rows in scope contain each stem, counted up to KEYWORD_COMMON_ROWS; the stems not
    remembered yet are counted together, in one round trip."""
    sql, params = scope or _scope_sql(queryset)
    scope = hashlib.sha256(f"{sql}|{params}".encode()).hexdigest()
    keys = {lexeme: f"bm25-df:{scope}:" + hashlib.sha256(lexeme.encode()).hexdigest() for lexeme in lexemes}
    remembered = caching.remembered_many(keys.values())
    found = {lexeme: remembered[key] for lexeme, key in keys.items() if key in remembered}
    missing = [lexeme for lexeme in keys if lexeme not in found]
    if missing:
        hits = f"SELECT 1 FROM ({sql}) AS scope WHERE search_vector @@ %s::tsquery LIMIT %s"  # noqa: S608
        count = f"(SELECT count(*) FROM ({hits}) AS h)"  # noqa: S608
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT " + ", ".join([count] * len(missing)),
                tuple(value for lexeme in missing for value in (*params, quoted(lexeme), _common_rows())),
            )
            counted = dict(zip(missing, cursor.fetchone(), strict=True))
        found.update(counted)
        caching.remember_many({keys[lexeme]: n for lexeme, n in counted.items()}, ttl=STATS_TTL_S)
    return found


def idf(rows: int, frequency: int) -> float:
    """BM25's inverse document frequency, never negative."""
    return math.log(1 + (rows - frequency + 0.5) / (frequency + 0.5))


@dataclass(frozen=True)
class TermStatistics:
    """What BM25 knows of a scope for one query: its rows, their average length in stems, and the
    weight (inverse document frequency) of each query stem worth matching. A stem in
    KEYWORD_COMMON_ROWS rows or more has none; one counted in no row (the count may be a few minutes
    old) weighs as much as a stem in one row, which is what the first row written with it makes it."""

    rows: int
    average_length: float
    weights: dict[str, float]

    def score_of_weight(self, weight: float, length: int) -> float:
        """BM25 of a text of ``length`` stems whose matched stems (each counted once) weigh ``weight`` together."""
        return weight * (K1 + 1) / (1 + K1 * (1 - B + B * length / self.average_length))


def term_statistics(
    queryset: QuerySet, lexemes: Sequence[str], scope: tuple[str, tuple] | None = None
) -> TermStatistics:
    """The scope's statistics for ``lexemes`` (two round trips at most, both often answered from the cache)."""
    scope = scope or _scope_sql(queryset)
    rows, average = collection_stats(queryset, scope)
    frequencies = document_frequencies(queryset, lexemes, scope) if lexemes else {}
    common = _common_rows()
    # A stem in that many rows says little and would make the ranking read all of them: the dense
    # side covers what such words mean.
    weights = {lexeme: idf(max(rows, 1), max(df, 1)) for lexeme, df in frequencies.items() if df < common}
    return TermStatistics(rows=rows, average_length=average, weights=weights)


def bm25_rank(
    queryset: QuerySet,
    lexemes: Sequence[str],
    *,
    limit: int,
    key: str = "pk",
    term_counts: bool = True,
    statistics: TermStatistics | None = None,
) -> list[tuple[object, float]]:
    """The rows in scope matching any informative stem, as (key, BM25 score), best first; ``key`` is
    the primary key or another unique column (a URI). ``statistics`` are the scope's, when the caller
    has them already.

    With ``term_counts`` off, a stem counts once however often a text repeats it: exact for short
    texts such as chat turns, where a word seldom comes twice, and several times cheaper, since
    PostgreSQL then only tests each stem instead of unpacking every matching text's word list.
    """
    if not lexemes:
        return []
    # One scope for the statistics and the ranking: its key column does not change what is counted, and
    # building the scope's SQL costs more than running it.
    scope = _scope_sql(queryset, key)
    statistics = statistics or term_statistics(queryset, lexemes, scope)
    # Each stem once: a text is scored once per stem it holds, however the query repeats it.
    asked = dict.fromkeys(lexemes)
    weights = [(lexeme, statistics.weights[lexeme]) for lexeme in asked if lexeme in statistics.weights]
    if not weights:
        return []
    average = statistics.average_length
    sql, params = scope
    tsquery = " | ".join(quoted(lexeme) for lexeme, _ in weights)
    key = _key_column(queryset, key)
    norm = "(1 - %s + %s * length(scope.search_vector) / %s)"
    if term_counts:
        # Each matching text's word list is cut to the query's stems before it is unpacked (the text less
        # everything but them), and each stem's weight is picked by name: a row then costs a few stems'
        # work instead of its whole list joined to the query's (a third less time for common words).
        idf = " ".join(["WHEN %s THEN %s::float"] * len(weights))
        own = "ts_delete(scope.search_vector, tsvector_to_array(ts_delete(scope.search_vector, %s::text[])))"
        query = (
            f"SELECT scope.{key}, (SELECT SUM((CASE u.lexeme {idf} END) * (u.tf * %s) / (u.tf + %s * {norm}))"  # noqa: S608
            f" FROM (SELECT lexeme, coalesce(array_length(positions, 1), 1) AS tf FROM unnest({own})) AS u) AS score"
            f" FROM ({sql}) AS scope WHERE scope.search_vector @@ %s::tsquery"
            f" ORDER BY score DESC, scope.{key} LIMIT %s"
        )
        flat = [item for pair in weights for item in pair]
        arguments = (*flat, K1 + 1, K1, B, B, average, [lexeme for lexeme, _ in weights], *params, tsquery, limit)
    else:
        present = " + ".join(["CASE WHEN scope.search_vector @@ %s::tsquery THEN %s ELSE 0 END"] * len(weights))
        query = (
            f"SELECT scope.{key}, ({present}) * %s / (1 + %s * {norm}) AS score"  # noqa: S608
            f" FROM ({sql}) AS scope WHERE scope.search_vector @@ %s::tsquery"
            f" ORDER BY score DESC, scope.{key} LIMIT %s"
        )
        flat = [value for lexeme, weight in weights for value in (quoted(lexeme), weight)]
        arguments = (*flat, K1 + 1, K1, B, B, average, *params, tsquery, limit)
    with connection.cursor() as cursor:
        cursor.execute(query, arguments)
        return [(pk, float(score)) for pk, score in cursor.fetchall()]
