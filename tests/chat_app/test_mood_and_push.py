"""An answer's mood, derived from what the turn had; and the pushes that let pages follow a document's
status and a commit's memories over the user's websocket, to that user alone."""

from __future__ import annotations

import json

import pytest
from asgiref.sync import async_to_sync
from channels.db import database_sync_to_async
from channels.layers import get_channel_layer
from channels.testing import WebsocketCommunicator
from rest_framework.authtoken.models import Token

from chat_app import services as pipeline
from config.asgi import application
from documents_app import services as documents
from foundation.push import push_to_user, user_group
from sessions_app import services as sessions
from sessions_app.models import Message
from tests.factories import UserFactory, index_document
from tests.helpers import pushed_events
from tests.samples import KETTLE


@pytest.mark.django_db
def test_a_grounded_answer_is_confident_and_says_why(auth_client, user, library):
    body = auth_client.post("/api/ai/chat", {"message": "How often do I descale the Aurora kettle?"}, format="json")
    body = body.json()
    assert body["mood"] == "confident" and "passage" in body["mood_reason"]
    stored = Message.objects.get(session_id=body["session_id"], role="assistant").metadata
    assert stored["mood"] == "confident"
    assert stored["citations"][0]["uri"] == body["context"][0]["uri"] and stored["citations"][0]["title"]


@pytest.mark.django_db
def test_without_context_the_answer_is_uncertain(auth_client):
    body = auth_client.post("/api/ai/chat", {"message": "What is the capital of Mongolia?"}, format="json").json()
    assert body["mood"] == "uncertain" and "Nothing relevant" in body["mood_reason"]


@pytest.mark.django_db
def test_a_failed_search_makes_the_answer_apologetic(auth_client, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("index offline")

    monkeypatch.setattr(pipeline, "retrieval_search", broken)
    body = auth_client.post("/api/ai/chat", {"message": "Anything about kettles?"}, format="json").json()
    assert body["mood"] == "apologetic" and body["retrieval_error"]


@pytest.mark.django_db(transaction=True)
def test_a_document_announces_each_status_to_its_owners_group():
    owner = UserFactory()
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(user_group(owner.id), channel)
    document = index_document(owner, "kettle.md", KETTLE)
    documents.document_delete(document=document)
    statuses = [event["status"] for event in pushed_events(channel)]
    assert statuses == ["pending", "indexing", "ready", "deleted"]
    async_to_sync(layer.group_discard)(user_group(owner.id), channel)


@pytest.mark.django_db(transaction=True)
def test_the_websocket_relays_pushes_to_its_own_user_only():
    alice, bob = UserFactory(), UserFactory()
    keys = [Token.objects.create(user=u).key for u in (alice, bob)]

    async def run():
        sockets = []
        for key in keys:
            communicator = WebsocketCommunicator(application, f"/ws/chat/?token={key}")
            assert (await communicator.connect(timeout=10))[0]
            sockets.append(communicator)
        await database_sync_to_async(push_to_user)(alice.id, "document", {"doc_id": "d1", "status": "ready"})
        frame = json.loads(await sockets[0].receive_from(timeout=5))
        nothing = await sockets[1].receive_nothing(timeout=0.5)
        for communicator in sockets:
            await communicator.disconnect()
        return frame, nothing

    frame, nothing = async_to_sync(run)()
    assert frame == {"type": "document", "doc_id": "d1", "status": "ready"}
    assert nothing


@pytest.mark.django_db(transaction=True)
def test_a_commit_announces_what_was_learned_to_its_owner():
    owner = UserFactory()
    session = sessions.session_create(owner=owner, title="intro")
    sessions.message_bulk_create(
        session=session, messages=[sessions.NewMessage(role="user", content="My name is Dana Whitfield.")]
    )
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(user_group(owner.id), channel)
    result = sessions.session_commit(session=session)
    (event,) = [e for e in pushed_events(channel) if e["type"] == "commit"]
    assert event["session_id"] == str(session.id) and event["archive_uri"] == result.archive.uri
    assert [m["content"] for m in event["memory_diff"]["created"]] == ["Is called Dana Whitfield."]
    async_to_sync(layer.group_discard)(user_group(owner.id), channel)


@pytest.mark.django_db
def test_a_chat_scoped_to_chosen_documents_answers_from_those_alone(auth_client, user, library):
    extra = index_document(user, "tea.md", b"# Tea\n\nGreen tea steeps for two minutes at 80 degrees.")
    body = {"message": "warranty", "doc_ids": [str(library["router"].id), str(extra.id)]}
    answer = auth_client.post("/api/ai/chat", body, format="json").json()
    used = {item["doc_id"] for item in answer["context"]}
    assert used and used <= {str(library["router"].id), str(extra.id)}
    assert all(item["origin"] == "document" for item in answer["context"])  # memories left out
    stranger = index_document(UserFactory(), "other.md", b"# Other\n\nSomeone else's warranty notes.")
    refused = auth_client.post("/api/ai/chat", {"message": "warranty", "doc_ids": [str(stranger.id)]}, format="json")
    assert refused.status_code == 404
