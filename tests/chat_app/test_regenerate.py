"""Regenerate and edit-and-resend (``replace_last``): the new question replaces the session's last
question and its answer, so the conversation, its history and its search read as if it had been asked
so; an exchange already archived is never rewritten; and only the owner's session can be touched."""

from __future__ import annotations

import pytest

from sessions_app.models import ChatSession, Message
from tests.factories import ArchiveFactory, ChatSessionFactory, MessageFactory, UserFactory

pytestmark = pytest.mark.django_db


def _chat(client, **body):
    return client.post("/api/ai/chat", body, format="json")


def _turns(session_id) -> list[tuple[str, str]]:
    return list(Message.objects.filter(session_id=session_id).order_by("seq").values_list("role", "content"))


def test_regenerate_replaces_the_last_answer_and_edit_the_last_question(auth_client, library):
    session_id = _chat(auth_client, message="Tell me about the Aurora kettle.").json()["session_id"]
    _chat(auth_client, message="How often should I descale it?", session_id=session_id)
    before = _turns(session_id)

    again = _chat(auth_client, message="How often should I descale it?", session_id=session_id, replace_last=True)
    assert again.status_code == 200, again.json()
    after = _turns(session_id)
    assert [role for role, _ in after] == ["user", "assistant", "user", "assistant"]
    assert after[:3] == before[:3]

    edited = _chat(auth_client, message="How long is its warranty?", session_id=session_id, replace_last=True)
    assert edited.status_code == 200
    turns = _turns(session_id)
    assert [content for role, content in turns if role == "user"] == [
        "Tell me about the Aurora kettle.",
        "How long is its warranty?",
    ]
    assert "two years" in turns[-1][1]
    # What the page shows after a reload: each question once.
    history = auth_client.get(f"/api/sessions/{session_id}").json()["messages"]
    assert [m["content"] for m in history if m["role"] == "user"].count("How often should I descale it?") == 0


def test_an_archived_exchange_is_not_replaced(auth_client, user):
    session = ChatSessionFactory(owner=user)
    archive = ArchiveFactory(session=session)
    MessageFactory(session=session, role="user", content="Kept question", archive=archive)
    MessageFactory(session=session, role="assistant", content="Kept answer", archive=archive)
    response = _chat(auth_client, message="Another question", session_id=str(session.id), replace_last=True)
    assert response.status_code == 409 and response.json()["error"]["code"] == "already_committed"
    assert _turns(session.id) == [("user", "Kept question"), ("assistant", "Kept answer")]


def test_replace_last_needs_a_session(auth_client):
    response = _chat(auth_client, message="Hello", replace_last=True)
    assert response.status_code == 400
    assert not ChatSession.objects.exists() and not Message.objects.exists()


def test_nobody_replaces_another_persons_exchange(auth_client):
    session = ChatSessionFactory(owner=UserFactory())
    MessageFactory(session=session, role="user", content="Their question")
    response = _chat(auth_client, message="Mine now", session_id=str(session.id), replace_last=True)
    assert response.status_code == 404
    assert _turns(session.id) == [("user", "Their question")]


def test_a_rolling_summary_that_folded_the_replaced_turns_is_started_again(auth_client, user):
    session = ChatSessionFactory(owner=user, rolling_summary="They asked about descaling.")
    MessageFactory(session=session, seq=1, role="user", content="How do I descale?")
    MessageFactory(session=session, seq=2, role="assistant", content="With citric acid.")
    ChatSession.objects.filter(pk=session.pk).update(summary_through_seq=2)
    _chat(auth_client, message="How do I clean the lid?", session_id=str(session.id), replace_last=True)
    session.refresh_from_db()
    assert session.rolling_summary == "" and session.summary_through_seq == 0
    assert [content for role, content in _turns(session.id) if role == "user"] == ["How do I clean the lid?"]


def test_a_cited_earlier_conversation_keeps_its_passage_for_a_reload(auth_client, user):
    earlier = ChatSessionFactory(owner=user)
    MessageFactory(session=earlier, role="user", content="The Zephyr boiler's pilot light needs relighting monthly.")
    body = _chat(auth_client, message="How often does the Zephyr boiler pilot light need relighting?").json()
    conversation = [item for item in body["context"] if item["origin"] == "conversation"]
    assert conversation, body["context"]
    stored = Message.objects.filter(session_id=body["session_id"], role="assistant").get().metadata["citations"]
    cited = next(c for c in stored if c["origin"] == "conversation")
    assert "pilot light" in cited["text"] and cited["created_at"] and cited["session_id"] == str(earlier.id)
