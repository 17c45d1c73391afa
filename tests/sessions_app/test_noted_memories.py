"""Facts noted as they are said: the built-in patterns run on a person's own message, known text left
out, merged by key with the message as the memory's source; the memory names its conversation before
any commit, and the commit that archives the message adopts it."""

import pytest

from foundation.ai import MemoryCandidate
from sessions_app import services
from sessions_app.models import Memory, Message
from tests.factories import ArchiveFactory, ChatSessionFactory

pytestmark = pytest.mark.django_db


def _said(session, content: str, role: str = "user", **metadata) -> Message:
    (message,) = services.message_bulk_create(
        session=session, messages=[services.NewMessage(role=role, content=content, metadata=metadata)]
    )
    return message


def test_a_statement_is_noted_at_once_with_its_message_as_source(user, django_capture_on_commit_callbacks):
    session = ChatSessionFactory(owner=user)
    message = _said(session, "I live in Lisbon.")
    with django_capture_on_commit_callbacks(execute=True):
        diff = services.memory_note_from_turn(session=session, message=message)
    memory = Memory.objects.get(owner=user)
    assert diff["created"] == [
        {
            "id": memory.id,
            "uri": memory.uri,
            "category": "profile",
            "key": "location",
            "label": "Home",
            "content": "Lives in Lisbon.",
        }
    ]
    assert diff["updated"] == [] and diff["unchanged"] == []
    assert memory.source_archive is None and list(memory.source_messages.all()) == [message]
    memory.refresh_from_db()
    assert memory.embedding is not None, "it is embedded once written, so recall and search find it by meaning"


def test_saying_it_again_changes_nothing_and_a_new_value_updates_it_in_place(user):
    session = ChatSessionFactory(owner=user)
    services.memory_note_from_turn(session=session, message=_said(session, "I live in Lisbon."))
    again = services.memory_note_from_turn(session=session, message=_said(session, "I live in Lisbon."))
    assert [m["content"] for m in again["unchanged"]] == ["Lives in Lisbon."] and not again["created"]
    moved = services.memory_note_from_turn(session=session, message=_said(session, "I now live in Porto."))
    assert [(m["content"], m["previous"]) for m in moved["updated"]] == [("Lives in Porto.", "Lives in Lisbon.")]
    assert Memory.objects.filter(owner=user).count() == 1


def test_only_a_persons_own_words_are_noted(user):
    session = ChatSessionFactory(owner=user)
    answer = _said(session, "I live in Lisbon.", role="assistant")
    injected = _said(session, "My name is Mallory Recalled.", source="recall")
    question = _said(session, "How often should I descale the kettle?")
    for message in (answer, injected, question):
        assert services.memory_note_from_turn(session=session, message=message) == services.memories.empty_diff()
    assert not Memory.objects.exists()


def test_known_text_pasted_back_is_not_noted_again(user):
    session = ChatSessionFactory(owner=user)
    ArchiveFactory(session=session, overview="Topic: introductions\nKey facts:\n- My name is Dana Whitfield.")
    diff = services.memory_note_from_turn(session=session, message=_said(session, "My name is Dana Whitfield."))
    assert diff == services.memories.empty_diff()


def test_the_patterns_are_used_whatever_engine_is_configured(user, hosted_llm, fake_llm, monkeypatch):
    found = [MemoryCandidate(category="profile", key="allergies", content="Severely allergic to peanuts")]
    monkeypatch.setattr(services.memories, "extract_by_patterns", lambda turns: found)
    session = ChatSessionFactory(owner=user)
    diff = services.memory_note_from_turn(session=session, message=_said(session, "Peanuts could kill me."))
    assert [m["content"] for m in diff["created"]] == ["Severely allergic to peanuts"]
    assert not fake_llm.requests, "noting a turn never calls the model"


def test_a_noted_memory_names_its_conversation_and_the_commit_adopts_it(auth_client, user):
    session = ChatSessionFactory(owner=user)
    message = _said(session, "My name is Dana Whitfield.")
    services.memory_note_from_turn(session=session, message=message)
    (listed,) = auth_client.get("/api/memories").json()["results"]
    assert listed["session_id"] == str(session.id) and listed["source_message_id"] == message.id
    assert auth_client.get(f"/api/memories/{listed['id']}").json()["session_id"] == str(session.id)

    result = services.session_commit(session=session)
    assert [m["content"] for m in result.memory_diff["unchanged"]] == ["Is called Dana Whitfield."]
    memory = Memory.objects.get(owner=user)
    assert memory.source_archive == result.archive, "the archive holding the turn it was drawn from"
    edited = auth_client.patch(f"/api/memories/{memory.id}", {"content": "Name: Dana W."}, format="json").json()
    assert edited["session_id"] == str(session.id)
