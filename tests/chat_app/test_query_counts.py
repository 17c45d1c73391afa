"""The database work of the hot paths, pinned: a change that adds a query to a chat turn, a search, a
find, a recall or a commit fails here and has to say why. (Savepoints count: each test runs inside a
transaction, so every atomic block opens one.)"""

import pytest
from django.core.cache import cache

from chat_app import services as chat
from sessions_app.models import ChatSession

pytestmark = pytest.mark.django_db


@pytest.fixture
def conversation(user, library):
    """A session one turn in, with the kettle manual in its working set. The cache starts empty and
    the first turn warms it, so every count below is the steady state's, whatever ran before."""
    cache.clear()
    first = chat.chat_reply(owner=user, request=chat.ChatRequest(message="Tell me about the Aurora kettle."))
    return ChatSession.objects.get(id=first["session_id"])


def test_the_second_turn_of_a_chat(auth_client, conversation, django_assert_num_queries):
    body = {"message": "How often should I descale it?", "session_id": str(conversation.id)}
    # 2 for the request (token, session); 5 to record the question (2 of them savepoints); 20 to
    # search (session context, titles in use, documents in one round of descent,
    # memories, earlier conversations; 3 of them count how rare the new question's words are, which is
    # remembered for a few minutes); 1 for the history; 2 to judge the passages' relevance (the stems
    # of the question and the passages, read with their documents' titles by the search, and how rare
    # the new words are among the documents, remembered too); 1 to record the turn's 2 embeddings
    # together; 5 to record the answer and the trace. A question states no fact, so noting memories
    # costs nothing.
    with django_assert_num_queries(35):
        response = auth_client.post("/api/ai/chat", body, format="json")
    assert response.status_code == 200, response.json()
    assert response.json()["context"]


def test_a_search_with_a_session(auth_client, conversation, django_assert_num_queries):
    body = {"query": "and the warranty?", "session_id": str(conversation.id)}
    # The descent opens up to a dozen directories a round, one query each: the manuals' short Warranty
    # sections are directories of their own, so this search takes two rounds. Its two embeddings (the
    # question as asked, then rewritten) are recorded together.
    with django_assert_num_queries(22):
        response = auth_client.post("/api/retrieval/search", body, format="json")
    assert response.status_code == 200 and response.json()["results"]


def test_a_find(auth_client, conversation, django_assert_num_queries):
    with django_assert_num_queries(14):
        response = auth_client.post("/api/retrieval/find", {"query": "how do I reset the password?"}, format="json")
    assert response.status_code == 200 and response.json()["results"]


def test_a_recall(auth_client, conversation, django_assert_num_queries):
    # The term statistics of a user's messages are counted once and remembered for a few minutes; the
    # seventh query stores the recall's trace, which the operators' dashboard counts and times.
    auth_client.post("/api/memory/recall", {"query": "descaling the kettle"}, format="json")
    with django_assert_num_queries(7):
        response = auth_client.post("/api/memory/recall", {"query": "descaling the kettle"}, format="json")
    assert response.status_code == 200 and response.json()["count"]


def test_a_commit(auth_client, conversation, django_assert_num_queries):
    with django_assert_num_queries(15):
        response = auth_client.post(f"/api/sessions/{conversation.id}/commit", {}, format="json")
    assert response.status_code == 200 and response.json()["archive"]
