"""Figures remembered between searches (how many rows a scope holds, how many hold a word) belong to the
database they were counted in, even where two databases share one Redis."""

from __future__ import annotations

import pytest
from django.db import DEFAULT_DB_ALIAS, connection, connections
from django.test.utils import CaptureQueriesContext

from foundation import caching
from foundation.bm25 import document_frequencies
from sessions_app.models import Message
from tests.factories import ChatSessionFactory, MessageFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def another_database(monkeypatch):
    """The same SQL counted against another database on the same Redis (another deployment, a bench)."""

    def switch() -> None:
        caching.forget_all_local()  # another process: only Redis is shared
        monkeypatch.setitem(connections[DEFAULT_DB_ALIAS].settings_dict, "NAME", "another_recollect")

    return switch


def test_a_figure_counted_in_one_database_is_not_read_in_another(another_database):
    assert caching.remembered("rows", lambda: 10, ttl=60) == 10
    assert caching.remembered("rows", lambda: 99, ttl=60) == 10, "remembered where it was counted"
    another_database()
    assert caching.remembered("rows", lambda: 99, ttl=60) == 99
    assert caching.remembered_many(["rows"]) == {"rows": 99}


def test_how_many_messages_hold_a_word_is_counted_again_for_another_database(another_database):
    session = ChatSessionFactory()
    MessageFactory(session=session, owner=session.owner, content="the billing service failed")
    scope = Message.objects.filter(owner=session.owner)
    assert document_frequencies(scope, ["servic"]) == {"servic": 1}
    with CaptureQueriesContext(connection) as same:
        document_frequencies(scope, ["servic"])
    another_database()
    with CaptureQueriesContext(connection) as other:
        document_frequencies(scope, ["servic"])
    assert len(same) == 0 and len(other) == 1
