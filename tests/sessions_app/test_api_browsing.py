"""What the browser app asks of the sessions and memory API: conversations searched by title and by
what was said, memories searched, corrected (the old text kept) and linked to their conversation."""

from __future__ import annotations

import pytest

from tests.factories import ArchiveFactory, ChatSessionFactory, MemoryFactory, MessageFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_sessions_are_searched_by_title_and_by_content(auth_client, user):
    titled = ChatSessionFactory(owner=user, title="Holiday planning")
    said = ChatSessionFactory(owner=user, title="Untitled")
    MessageFactory(session=said, content="We compared the invoices for the export jobs.")
    other = ChatSessionFactory(owner=user, title="Groceries")
    MessageFactory(session=other, content="Milk and bread.")
    ChatSessionFactory(owner=UserFactory(), title="Holiday of someone else")

    def ids(q, **extra):
        body = auth_client.get("/api/sessions", {"q": q, **extra}).json()
        return {item["session_id"] for item in body["results"]}

    assert ids("holiday") == {str(titled.id)}
    assert ids("invoice export") == {str(said.id)}  # by its words: "invoices", "exports"
    assert ids("") == {str(titled.id), str(said.id), str(other.id)}
    assert ids("holiday", agent_id="bot") == set()


def test_memories_are_searched_corrected_with_history_and_linked_to_their_session(auth_client, user):
    session = ChatSessionFactory(owner=user)
    archive = ArchiveFactory(session=session)
    tea = MemoryFactory(owner=user, key="drink", content="Prefers green tea.", source_archive=archive)
    MemoryFactory(owner=user, key="editor", content="Uses vim.")

    found = auth_client.get("/api/memories", {"q": "tea"}).json()["results"]
    assert [m["id"] for m in found] == [tea.id]
    assert found[0]["session_id"] == str(session.id)
    turn = MessageFactory(session=session)
    tea.source_messages.add(turn)
    assert auth_client.get(f"/api/memories/{tea.id}").json()["source_message_id"] == turn.id

    response = auth_client.patch(f"/api/memories/{tea.id}", {"content": "Prefers black tea."}, format="json")
    assert response.status_code == 200, response.json()
    body = response.json()
    assert body["content"] == "Prefers black tea."
    assert body["history"][-1]["content"] == "Prefers green tea." and body["history"][-1]["edited"]
    tea.refresh_from_db()
    assert tea.embedding is None  # made again from the new text

    assert auth_client.patch(f"/api/memories/{tea.id}", {"content": "  "}, format="json").status_code == 400
    stranger = MemoryFactory(owner=UserFactory())
    assert auth_client.patch(f"/api/memories/{stranger.id}", {"content": "x"}, format="json").status_code == 404


def test_an_updated_memory_links_to_the_turn_of_its_current_text_in_the_session_it_names(auth_client, user):
    first, second = ChatSessionFactory(owner=user), ChatSessionFactory(owner=user)
    old_archive, new_archive = ArchiveFactory(session=first), ArchiveFactory(session=second)
    lyon = MessageFactory(session=first, content="I live in Lyon.", archive=old_archive)
    paris = MessageFactory(session=second, content="I live in Paris.", archive=new_archive)
    home = MemoryFactory(owner=user, key="home", content="Lives in Paris.", source_archive=new_archive)
    home.source_messages.add(lyon, paris)
    body = auth_client.get(f"/api/memories/{home.id}").json()
    assert (body["session_id"], body["source_message_id"]) == (str(second.id), paris.id)
