"""Full-text search, one configuration for every table and query: English stemming and stopwords."""

from __future__ import annotations

from django.db import connection

TEXT_SEARCH_CONFIG = "english"
MAX_QUERY_LEXEMES = 64


def query_lexemes(text: str) -> tuple[str, ...]:
    """The stems PostgreSQL's English configuration makes of ``text``, stopwords dropped, in the order
    they appear (so that a very long query keeps its beginning)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT lexeme FROM unnest(to_tsvector(%s::regconfig, %s)) ORDER BY positions[1] LIMIT %s",
            [TEXT_SEARCH_CONFIG, text, MAX_QUERY_LEXEMES],
        )
        return tuple(row[0] for row in cursor.fetchall())
