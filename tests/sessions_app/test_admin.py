"""Conversations in the admin: newest first, renamed but never re-owned, committed in bulk after a
confirmation, and what is derived from them (messages as recorded, archives, summaries) read-only;
a memory's correction keeps its old text, as in the app."""

import pytest
from django.urls import reverse

from sessions_app.models import Archive, ChatSession, Memory, Message
from tests.factories import ArchiveFactory, ChatSessionFactory, MemoryFactory, MessageFactory, UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def staff_client(client):
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    return client


def test_lists_are_newest_first(staff_client):
    older, newer = ChatSessionFactory(title="older"), ChatSessionFactory(title="newer")
    ChatSession.objects.filter(pk=older.pk).update(created_at=newer.created_at.replace(year=2020))
    listing = staff_client.get(reverse("admin:sessions_app_chatsession_changelist"))
    assert [s.title for s in listing.context["cl"].result_list] == ["newer", "older"]
    first, second = MessageFactory(session=newer, content="first"), MessageFactory(session=newer, content="second")
    Message.objects.filter(pk=first.pk).update(created_at=second.created_at.replace(year=2020))
    listing = staff_client.get(reverse("admin:sessions_app_message_changelist"))
    assert [m.content for m in listing.context["cl"].result_list] == ["second", "first"]


def test_a_session_can_be_renamed_but_not_given_to_someone_else_nor_its_summary_rewritten(staff_client):
    session = ChatSessionFactory(title="old", rolling_summary="They talked about kettles.", summary_through_seq=4)
    stranger = UserFactory()
    url = reverse("admin:sessions_app_chatsession_change", args=[session.pk])
    staff_client.post(
        url, {"title": "new", "metadata": "{}", "owner": stranger.pk, "rolling_summary": "", "summary_through_seq": 0}
    )
    session.refresh_from_db()
    assert session.title == "new" and session.owner != stranger
    assert (session.rolling_summary, session.summary_through_seq) == ("They talked about kettles.", 4)
    assert staff_client.get(reverse("admin:sessions_app_chatsession_add")).status_code == 403


@pytest.mark.parametrize("model", [Message, Archive], ids=lambda m: m.__name__)
def test_messages_and_archives_are_shown_and_never_edited(staff_client, model):
    archive = ArchiveFactory()
    message = MessageFactory(session=archive.session, content="as said")
    obj = archive if model is Archive else message
    name = model._meta.model_name
    assert staff_client.get(reverse(f"admin:sessions_app_{name}_change", args=[obj.pk])).status_code == 200
    assert staff_client.post(reverse(f"admin:sessions_app_{name}_change", args=[obj.pk]), {}).status_code == 403
    assert (
        staff_client.post(reverse(f"admin:sessions_app_{name}_delete", args=[obj.pk]), {"post": "yes"}).status_code
        == 403
    )
    assert staff_client.get(reverse(f"admin:sessions_app_{name}_add")).status_code == 403
    assert model.objects.filter(pk=obj.pk).exists()


def test_correcting_a_memory_keeps_its_old_text_and_makes_its_vector_again(staff_client, settings):
    memory = MemoryFactory(
        content="Lives in Lyon.", embedding=[0.1] * settings.EMBEDDING_DIMENSIONS, embedding_model="m"
    )
    url = reverse("admin:sessions_app_memory_change", args=[memory.pk])
    staff_client.post(url, {"content": "Lives in Lille.", "key": "tampered", "category": "events"})
    memory.refresh_from_db()
    assert memory.content == "Lives in Lille." and memory.key != "tampered"
    assert memory.history[-1]["content"] == "Lives in Lyon." and memory.history[-1]["edited"]
    assert memory.embedding_model != "m"  # made again from the new text (the test settings embed at once)


def test_the_memory_list_names_each_memory_by_its_label(staff_client):
    MemoryFactory(category="preferences", key="oat_milk_in_coffee", content="Prefers oat milk in coffee.")
    page = staff_client.get(reverse("admin:sessions_app_memory_changelist")).content.decode()
    assert "Oat milk in coffee" in page


def test_committing_sessions_in_bulk_asks_first_then_archives_them(staff_client):
    sessions = [ChatSessionFactory(), ChatSessionFactory()]
    for session in sessions:
        MessageFactory(session=session, content="My name is Dana and I live in Lyon.")
        MessageFactory(session=session, role="assistant", content="Noted, Dana.")
    url = reverse("admin:sessions_app_chatsession_changelist")
    selection = {"action": "commit_selected", "_selected_action": [s.pk for s in sessions]}
    asked = staff_client.post(url, selection)
    assert asked.status_code == 200 and b"Yes, commit" in asked.content and not Archive.objects.exists()
    done = staff_client.post(url, {**selection, "confirmed": "yes"}, follow=True)
    assert Archive.objects.count() == 2
    assert "Commit: 2 chat sessions." in done.content.decode()


def test_deleting_a_session_says_how_much_goes_with_it_in_counts(staff_client):
    session = ChatSessionFactory()
    MessageFactory.create_batch(3, session=session)
    page = staff_client.get(reverse("admin:sessions_app_chatsession_delete", args=[session.pk])).content.decode()
    assert "Messages: 3" in page
    assert Memory.objects.count() == 0
