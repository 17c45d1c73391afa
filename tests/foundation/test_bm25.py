"""BM25 over PostgreSQL's full text, as the keyword side of document search ranks passages: a text that
repeats the rare word asked for ranks above one that says it once, words the query does not ask for
add nothing, and each score is BM25's own formula over the text's stems."""

from __future__ import annotations

import re

import pytest
from django.db import connection

from documents_app.models import DocumentNode
from foundation import bm25
from tests.factories import index_document

pytestmark = pytest.mark.django_db

NOTES = {
    "often.md": b"Descale the kettle. Descale it every month. Descale with citric acid, never vinegar.",
    "once.md": b"Descale the kettle once a year; wipe the lid, rinse the filter and dry the base.",
    "router.md": b"The router restarts at night and keeps its settings after the update.",
}


@pytest.fixture
def chunks(user):
    for name, text in NOTES.items():
        index_document(user, name, text)
    return DocumentNode.objects.filter(owner=user, kind="chunk")


def _formula(chunk_uri: str, statistics: bm25.TermStatistics) -> float:
    """BM25 computed here from the chunk's stems and their positions, as PostgreSQL stores them."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT search_vector::text, length(search_vector) FROM documents_app_documentnode WHERE uri = %s",
            [chunk_uri],
        )
        vector, length = cursor.fetchone()
    total = 0.0
    for lexeme, weight in statistics.weights.items():
        found = re.search(rf"'{re.escape(lexeme)}':([0-9A-D,]+)", vector)
        if found:
            tf = len(found.group(1).split(","))
            norm = 1 - bm25.B + bm25.B * length / statistics.average_length
            total += weight * tf * (bm25.K1 + 1) / (tf + bm25.K1 * norm)
    return total


def test_a_text_repeating_the_rare_word_asked_for_ranks_first_with_bm25s_own_score(chunks):
    lexemes = ["descal", "vinegar", "lid"]
    ranked = bm25.bm25_rank(chunks, lexemes, limit=10, key="uri")
    by_uri = {chunk.uri: chunk for chunk in chunks}
    names = [by_uri[uri].document.filename for uri, _ in ranked]
    assert names[0] == "often.md" and set(names) == {"often.md", "once.md"}, "the router says none of it"
    statistics = bm25.term_statistics(chunks, lexemes)
    for uri, score in ranked:
        assert score == pytest.approx(_formula(uri, statistics), rel=1e-9)


def test_words_the_query_does_not_ask_for_add_nothing(chunks):
    alone = dict(bm25.bm25_rank(chunks, ["vinegar"], limit=10, key="uri"))
    assert len(alone) == 1
    ((uri, score),) = alone.items()
    statistics = bm25.term_statistics(chunks, ["vinegar"])
    assert score == pytest.approx(_formula(uri, statistics), rel=1e-9), "'descale', said three times, is not asked"
