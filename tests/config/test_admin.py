"""Every model is in the admin, searchable and filterable, and no page ever renders a vector."""

import pytest
from django.contrib import admin
from django.urls import reverse

from documents_app.models import Document, DocumentNode
from foundation.models import ModelCall
from retrieval_app.models import SearchTrace
from sessions_app.models import Archive, ChatSession, Memory, Message
from tests.factories import (
    ArchiveFactory,
    ChatSessionFactory,
    DocumentFactory,
    DocumentNodeFactory,
    MemoryFactory,
    MessageFactory,
    SearchTraceFactory,
    UserFactory,
)

# A value no page could show unless it printed the vector itself.
MARKER = 0.7071234


def _vector(settings) -> list[float]:
    return [MARKER] + [0.0] * (settings.EMBEDDING_DIMENSIONS - 1)


@pytest.fixture
def staff_client(client, db):
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    return client


@pytest.fixture
def one_of_each(settings, db):
    session = ChatSessionFactory()
    vector = _vector(settings)
    return {
        ChatSession: session,
        Message: MessageFactory(session=session, embedding=vector, embedding_model="m"),
        Archive: ArchiveFactory(session=session, embedding=vector, embedding_model="m"),
        Memory: MemoryFactory(owner=session.owner, embedding=vector, embedding_model="m"),
        Document: (document := DocumentFactory(owner=session.owner)),
        DocumentNode: DocumentNodeFactory(document=document, embedding=vector, embedding_model="m"),
        SearchTrace: SearchTraceFactory(owner=session.owner, session=session),
    }


MODELS = [ChatSession, Message, Archive, Memory, Document, DocumentNode, SearchTrace]


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_each_model_is_registered_with_search_and_filters(model):
    model_admin = admin.site._registry[model]
    assert model_admin.search_fields
    assert model_admin.list_filter


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.__name__)
def test_list_and_change_pages_render_without_vectors(staff_client, one_of_each, model):
    info = (model._meta.app_label, model._meta.model_name)
    obj = one_of_each[model]
    listing = staff_client.get(reverse("admin:{}_{}_changelist".format(*info)), {"q": ""})
    # (A trace's change page is its readable page.)
    change = staff_client.get(reverse("admin:{}_{}_change".format(*info), args=[obj.pk]), follow=True)
    assert listing.status_code == 200
    assert change.status_code == 200
    for page in (listing, change):
        assert str(MARKER) not in page.content.decode()


@pytest.mark.parametrize("model", [Message, Archive, Memory, DocumentNode], ids=lambda m: m.__name__)
def test_embedded_rows_can_be_filtered_by_whether_they_have_a_vector(staff_client, one_of_each, model):
    info = (model._meta.app_label, model._meta.model_name)
    url = reverse("admin:{}_{}_changelist".format(*info))
    assert staff_client.get(url, {"embedded": "yes"}).context["cl"].result_count == 1
    assert staff_client.get(url, {"embedded": "no"}).context["cl"].result_count == 0


def test_the_message_list_costs_the_same_queries_for_many_rows(staff_client, settings, django_assert_max_num_queries):
    session = ChatSessionFactory()
    MessageFactory.create_batch(3, session=session)
    url = reverse("admin:sessions_app_message_changelist")
    staff_client.get(url)  # warm the session and content-type caches
    with django_assert_max_num_queries(8) as few:
        staff_client.get(url)
    MessageFactory.create_batch(40, session=session)
    with django_assert_max_num_queries(len(few.captured_queries)):
        staff_client.get(url)


def test_model_calls_are_listed_with_totals_and_cannot_be_edited(staff_client):
    ModelCall.objects.create(
        kind="generation",
        purpose="archive_overview",
        backend="litellm",
        model="gpt-x",
        input_tokens=1200,
        output_tokens=300,
        cost_usd="0.0042",
        latency_ms=812.5,
    )
    ModelCall.objects.create(
        kind="embedding", purpose="recall", backend="local", model="minilm", ok=False, error="timeout", latency_ms=30.0
    )
    page = staff_client.get(reverse("admin:foundation_modelcall_changelist"))
    assert page.status_code == 200
    text = page.content.decode()
    assert "2 calls (1 failed)" in text and "1200 tokens in, 300 out" in text and "$0.0042" in text
    narrowed = staff_client.get(reverse("admin:foundation_modelcall_changelist"), {"ok__exact": "0"})
    assert "1 calls (1 failed)" in narrowed.content.decode()
    call = ModelCall.objects.first()
    assert staff_client.post(reverse("admin:foundation_modelcall_change", args=[call.pk]), {}).status_code == 403


def test_deleting_a_session_in_the_admin_takes_its_own_memories(staff_client):
    from sessions_app.models import ChatSession, Memory

    archive = ArchiveFactory()
    memory = MemoryFactory(owner=archive.session.owner, source_archive=archive)
    url = reverse("admin:sessions_app_chatsession_delete", args=[archive.session.pk])
    assert staff_client.post(url, {"post": "yes"}).status_code == 302
    assert not ChatSession.objects.exists() and not Memory.objects.filter(pk=memory.pk).exists()


def test_documents_can_be_queued_for_indexing_again_from_the_admin(staff_client, django_capture_on_commit_callbacks):
    from documents_app import services
    from documents_app.models import Document

    owner = UserFactory()
    with django_capture_on_commit_callbacks(execute=True):
        document, _ = services.document_upload(owner=owner, filename="a.txt", data=b"Notes about the pump schedule.")
    Document.objects.filter(pk=document.pk).update(status="failed", error="earlier failure")
    url = reverse("admin:documents_app_document_changelist")
    asked = staff_client.post(url, {"action": "index_again", "_selected_action": [document.pk]})
    assert asked.status_code == 200 and b"Yes, queue for indexing" in asked.content  # confirmed first
    assert Document.objects.get(pk=document.pk).status == "failed"
    with django_capture_on_commit_callbacks(execute=True):
        response = staff_client.post(
            url, {"action": "index_again", "_selected_action": [document.pk], "confirmed": "yes"}
        )
    assert response.status_code == 302
    document.refresh_from_db()
    assert document.status == "ready" and document.error == ""
