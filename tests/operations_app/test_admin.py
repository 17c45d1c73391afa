"""Deleting a user from the admin goes through the services: their stored files, document trees and
vectors, conversations, memories, working sets, traces and tokens all go, nothing of anyone else's does,
and the model calls they made stay (paid for), without an owner. Traces and model calls are read-only."""

from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from accounts_app.models import ApiToken
from accounts_app.tokens import api_token_create
from documents_app.models import Document, DocumentNode
from foundation.models import ModelCall
from retrieval_app.models import SearchTrace
from sessions_app import services as sessions
from sessions_app.models import Archive, ChatSession, Memory, Message
from tests.factories import UserFactory, index_document
from tests.samples import KETTLE, ROUTER

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def staff_client(client):
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    return client


def _a_full_account(user, client_for):
    """A user with a document, a chat that searched it, a commit with a memory, a working set and a token."""
    document = index_document(user, "kettle.md", KETTLE)
    chat = client_for(user).post(
        "/api/ai/chat", {"message": "My name is Dana. How do I descale the kettle?"}, format="json"
    )
    session_id = chat.json()["session_id"]
    client_for(user).post(f"/api/sessions/{session_id}/commit", {}, format="json")
    api_token_create(user=user, name="agent")
    return document, session_id


@pytest.fixture
def client_for():
    from rest_framework.test import APIClient

    def make(user):
        client = APIClient()
        client.force_authenticate(user)
        return client

    return make


def test_deleting_a_user_in_the_admin_leaves_nothing_of_theirs_behind(staff_client, client_for):
    user, neighbour = UserFactory(), UserFactory()
    document, session_id = _a_full_account(user, client_for)
    stored = Path(document.file.path)
    theirs = index_document(neighbour, "router.md", ROUTER)
    assert Memory.objects.filter(owner=user).exists() and SearchTrace.objects.filter(owner=user).exists()
    assert sessions.working_set_get(session_id=session_id).active_documents

    url = reverse("admin:auth_user_delete", args=[user.pk])
    confirm = staff_client.get(url).content.decode()
    assert "Messages: 2" in confirm and "Documents (and their stored files): 1" in confirm  # in counts
    assert staff_client.post(url, {"post": "yes"}).status_code == 302

    assert not get_user_model().objects.filter(pk=user.pk).exists()
    for model in (Document, DocumentNode, ChatSession, Message, Archive, Memory, SearchTrace, ApiToken):
        assert not model.objects.filter(owner_id=user.pk).exists(), model.__name__
    assert not stored.exists()
    assert not sessions.working_set_get(session_id=session_id).active_documents
    assert ModelCall.objects.filter(owner__isnull=True, purpose="chat_query").exists()  # kept, without an owner
    # The neighbour's library is untouched and still found.
    assert Document.objects.get(pk=theirs.pk).status == "ready" and Path(theirs.file.path).exists()
    assert DocumentNode.objects.filter(owner=neighbour).count() == theirs.node_count


def test_users_are_listed_newest_first_and_traces_and_calls_are_read_only(staff_client, client_for):
    user = UserFactory()
    client_for(user).post("/api/memory/recall", {"query": "anything"}, format="json")
    users = staff_client.get(reverse("admin:auth_user_changelist")).context["cl"].result_list
    assert users[0] == user
    trace = SearchTrace.objects.get(kind="recall")
    assert staff_client.get(reverse("admin:retrieval_app_searchtrace_change", args=[trace.pk])).url == (
        reverse("ops-trace", args=[trace.pk])
    )
    assert (
        staff_client.post(
            reverse("admin:retrieval_app_searchtrace_delete", args=[trace.pk]), {"post": "yes"}
        ).status_code
        == 403
    )
    call = ModelCall.objects.first()
    assert (
        staff_client.post(reverse("admin:foundation_modelcall_delete", args=[call.pk]), {"post": "yes"}).status_code
        == 403
    )
