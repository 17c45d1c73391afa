"""The hierarchical descent reads back, in each round, only the passages that could still be shown: the
best by the score they will have (their own blended with their section's), and, for documents the
session is working on, the best once the document bias is applied."""

from __future__ import annotations

import pytest

from documents_app.models import DocumentNode
from foundation import ai
from foundation.text import query_lexemes
from retrieval_app import retrievers
from retrieval_app.fusion import blend

pytestmark = pytest.mark.django_db

QUESTION = "how do I reset the password and descale the kettle?"


@pytest.fixture
def descent(user, library):
    """The owner's library as a descent sees it: the query, the scope, and every directory given a score."""
    scope = DocumentNode.objects.filter(owner=user)
    vector, model = ai.embed_query(QUESTION)
    query = retrievers.weighted(
        retrievers.Query(text=QUESTION, vector=vector, model=model, lexemes=query_lexemes(QUESTION)),
        scope.filter(kind="chunk"),
    )
    directories = list(scope.exclude(kind="chunk").order_by("uri").values_list("uri", flat=True))
    # Unequal section scores, so that a section's passages are not all alike.
    parent_scores = {uri: 0.2 + 0.6 * (index % 5) / 4 for index, uri in enumerate(directories)}
    return scope, query, parent_scores


def _final(row, query, parent_scores, alpha: float) -> float:
    own = blend(dense=row.dense, coverage=query.coverage(row.matched or []))
    return alpha * own + (1 - alpha) * parent_scores[row.parent_uri]


def _children(scope, query, parent_scores, cut=None):
    where = (f"{retrievers._NODES_TABLE}.parent_uri = ANY(%s)", [list(parent_scores)])
    return retrievers.node_rows(scope, query, where=where, cut=cut)


def test_a_round_keeps_every_directory_and_only_the_best_passages(descent, settings):
    scope, query, parent_scores = descent
    alpha = settings.SCORE_PROPAGATION_ALPHA
    every = _children(scope, query, parent_scores)
    chunks = [row for row in every if row.kind == "chunk"]
    assert len(chunks) > 4, "the library is too small to show a cut"

    cut = retrievers.ChunkCut(parent_scores=parent_scores, alpha=alpha, keep=3)
    kept = _children(scope, query, parent_scores, cut)

    best = sorted(chunks, key=lambda row: (-_final(row, query, parent_scores, alpha), row.uri))[:3]
    assert sorted(row.uri for row in kept if row.kind == "chunk") == sorted(row.uri for row in best)
    assert {row.uri for row in kept if row.kind != "chunk"} == {row.uri for row in every if row.kind != "chunk"}


def test_a_favoured_document_keeps_its_best_passages_too(descent, library, settings):
    scope, query, parent_scores = descent
    alpha = settings.SCORE_PROPAGATION_ALPHA
    kettle = str(library["kettle"].id)
    chunks = [row for row in _children(scope, query, parent_scores) if row.kind == "chunk"]

    def biased(row):
        return _final(row, query, parent_scores, alpha) * (10.0 if str(row.document_id) == kettle else 1.0)

    cut = retrievers.ChunkCut(
        parent_scores=parent_scores, alpha=alpha, keep=2, favoured=frozenset({kettle}), factor=10.0
    )
    kept = {row.uri for row in _children(scope, query, parent_scores, cut) if row.kind == "chunk"}

    plain = sorted(chunks, key=lambda row: (-_final(row, query, parent_scores, alpha), row.uri))[:2]
    favoured = sorted(chunks, key=lambda row: (-biased(row), row.uri))[:2]
    assert {row.uri for row in plain} != {row.uri for row in favoured}, "the bias changes nothing here"
    assert {row.uri for row in favoured} <= kept, "the passages the bias would show are missing"
    assert {row.uri for row in plain} <= kept, "the passages that decide when the descent settles are missing"
    assert kept == {row.uri for row in plain} | {row.uri for row in favoured}
