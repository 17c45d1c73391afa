"""Full-text search, one configuration for every table and query: English stemming and stopwords."""

from __future__ import annotations

from django.db import connection

TEXT_SEARCH_CONFIG = "english"
MAX_QUERY_LEXEMES = 64


# The stems of a text, as an array, for a query that needs them beside something else.
LEXEMES_SQL = "ARRAY(SELECT lexeme FROM unnest(to_tsvector(%s::regconfig, %s)) ORDER BY positions[1] LIMIT %s)"


def lexemes_params(text: str) -> list:
    return [TEXT_SEARCH_CONFIG, text, MAX_QUERY_LEXEMES]


def query_lexemes(text: str) -> tuple[str, ...]:
    """The stems PostgreSQL's English configuration makes of ``text``, stopwords dropped, in the order
    they appear (so that a very long query keeps its beginning)."""
    return texts_lexemes(text)[0]


def texts_lexemes(*texts: str) -> list[tuple[str, ...]]:
    """``query_lexemes`` of each text, in one statement."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT " + ", ".join([LEXEMES_SQL] * len(texts)), [p for text in texts for p in lexemes_params(text)]
        )
        return [tuple(stems or ()) for stems in cursor.fetchone()]
