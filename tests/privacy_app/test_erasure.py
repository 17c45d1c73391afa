"""Erasure leaves nothing: after a person's data is erased (or one conversation, document or memory is
deleted), every text and JSON column of every table, the upload folder and every key and value in Redis
are searched for a marker that only the erased data held, and for the person's id; nothing is found,
and another person's data is all there."""

from __future__ import annotations

import io
import json
import uuid
from datetime import timedelta
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.auth.hashers import make_password
from django.contrib.sessions.models import Session
from django.core.cache import cache
from django.core.management import call_command
from django.db import connection
from django.test import Client
from django.utils import timezone
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from accounts_app.models import AccountRequest, ApiToken, Invitation
from accounts_app.tokens import api_token_create
from documents_app.models import Document, DocumentNode
from foundation import task_names
from foundation.models import ModelCall, QueuedTask
from privacy_app.erasure import user_data_erase
from retrieval_app.models import SearchTrace
from sessions_app.models import Archive, ChatSession, Memory, Message
from sessions_app.services import working_set_get, working_set_update
from tests.factories import UserFactory, index_document

pytestmark = pytest.mark.django_db(transaction=True)

MARKER = "zebra-quokka-marker-7731"
OTHER = "walrus-heron-marker-5512"
# The columns that hold a user's id, whatever the table calls them.
USER_COLUMNS = ("owner_id", "user_id", "created_by_id", "used_by_id", "decided_by_id")


@pytest.fixture(autouse=True)
def _empty_redis():
    """Each test here searches the whole of Redis for its marker: another test's working sets, which
    carry the same marker for people of their own, must not be taken for this person's."""
    cache.clear()


def _client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def _populate(user, marker: str) -> dict:
    """A person with one of everything, the marker in each: chat turns, a committed archive, memories
    with history, an indexed document with its file, traces, model calls, tokens, a browser session, a
    working set in Redis, jobs kept for the workers, the invitation they came by and their request."""
    client = _client(user)
    first = client.post("/api/ai/chat", {"message": f"My code word is {marker}. I live in Lisbon."}, format="json")
    assert first.status_code == 200, first.content
    session_id = first.json()["session_id"]
    again = {"message": f"Remember {marker} for the trip.", "session_id": session_id}
    assert client.post("/api/ai/chat", again, format="json").status_code == 200
    assert client.post(f"/api/sessions/{session_id}/commit", {}, format="json").status_code == 200
    memory = client.post(
        "/api/memories", {"category": "entities", "key": "code word", "content": f"The code word is {marker}."}, "json"
    ).json()
    edited = {"content": f"The code word is still {marker}, said twice."}
    assert client.patch(f"/api/memories/{memory['id']}", edited, format="json").status_code == 200
    document = index_document(user, "notes.md", f"# Notes\n\nThe vault of {marker} opens on Mondays.\n".encode())
    assert client.post("/api/retrieval/find", {"query": f"{marker} vault"}, format="json").status_code == 200
    ModelCall.objects.create(
        kind="generation", purpose="chat", backend="litellm", model="m", owner=user, error=f"refused: {marker}"
    )
    api_token_create(user=user, name=f"{marker} agent")
    working_set_update(session_id=session_id, resolved_terms={"code": marker}, documents=[document.uri])
    QueuedTask.objects.create(task=task_names.DOCUMENT_INDEX, args=[str(document.id)])
    QueuedTask.objects.create(task=task_names.SESSION_FOLD_HISTORY, args=[session_id])
    message_ids = list(Message.objects.filter(owner=user).values_list("id", flat=True))
    QueuedTask.objects.create(task=task_names.EMBED_ROWS, args=["messages", message_ids])
    Client().force_login(user)
    Invitation.objects.create(
        key_digest=uuid.uuid4().hex, prefix="x", note=f"for {marker}", used_by=user,
        expires_at=timezone.now() + timedelta(days=1), used_at=timezone.now(),
    )  # fmt: skip
    AccountRequest.objects.create(username=user.username, password=make_password("x"), note=marker, user=user)
    return {"session_id": session_id, "document": document, "memory_id": memory["id"], "file": document.file.path}


def _counts(user) -> dict[str, int]:
    return {
        "sessions": ChatSession.objects.filter(owner=user).count(),
        "messages": Message.objects.filter(owner=user).count(),
        "archives": Archive.objects.filter(owner=user).count(),
        "memories": Memory.objects.filter(owner=user).count(),
        "documents": Document.objects.filter(owner=user).count(),
        "nodes": DocumentNode.objects.filter(owner=user).count(),
        "traces": SearchTrace.objects.filter(owner=user).count(),
        "tokens": ApiToken.objects.filter(owner=user).count(),
        "model calls": ModelCall.objects.filter(owner=user).count(),
    }


def _text_columns() -> list[tuple[str, str]]:
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'"
            " AND data_type IN ('text', 'character varying', 'json', 'jsonb', 'tsvector', 'ARRAY')"
        )
        return cursor.fetchall()


def _tables_holding(needle: str) -> set[tuple[str, str]]:
    """Every (table, column) of the database whose text holds ``needle`` (any case)."""
    found = set()
    with connection.cursor() as cursor:
        for table, column in _text_columns():
            cursor.execute(
                f'SELECT 1 FROM "{table}" WHERE "{column}"::text ILIKE %s LIMIT 1',  # noqa: S608 (schema names)
                [f"%{needle}%"],
            )
            if cursor.fetchone():
                found.add((table, column))
    return found


def _rows_naming_user(user_id: int) -> set[tuple[str, str]]:
    found = set()
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT table_name, column_name FROM information_schema.columns WHERE table_schema = 'public'"
            " AND column_name = ANY(%s)",
            [list(USER_COLUMNS)],
        )
        for table, column in cursor.fetchall():
            cursor.execute(f'SELECT 1 FROM "{table}" WHERE "{column}" = %s LIMIT 1', [user_id])  # noqa: S608
            if cursor.fetchone():
                found.add((table, column))
    return found


def _redis_holding(*needles: str) -> list[bytes]:
    """Every Redis key of the test database whose name or value holds one of ``needles``."""
    client = cache._cache.get_client(write=False)
    wanted = [needle.encode() for needle in needles]
    found = []
    for key in client.scan_iter(count=500):
        kind = client.type(key)
        if kind == b"string":
            values = [client.get(key) or b""]
        elif kind == b"list":
            values = client.lrange(key, 0, -1)
        elif kind == b"hash":
            values = [*client.hgetall(key).keys(), *client.hgetall(key).values()]
        elif kind in (b"set", b"zset"):
            values = list(client.smembers(key)) if kind == b"set" else client.zrange(key, 0, -1)
        else:
            values = []
        if any(needle in key or any(needle in value for value in values) for needle in wanted):
            found.append(key)
    return found


def _media_holding(needle: str) -> list[Path]:
    return [
        path for path in Path(settings.MEDIA_ROOT).rglob("*") if path.is_file() and needle.encode() in path.read_bytes()
    ]


def test_erasing_a_persons_data_leaves_nothing_of_it_anywhere_and_another_persons_all_there():
    user, other = UserFactory(), UserFactory()
    mine, theirs = _populate(user, MARKER), _populate(other, OTHER)
    # A conversation brought in from another tool: its import job and what it recorded go too.
    brought = [
        {"role": "user", "content": f"Imported: {MARKER} likes tea."},
        {"role": "assistant", "content": "Noted."},
    ]
    assert _client(user).post("/api/import", {"messages": brought, "title": MARKER}, format="json").status_code == 201
    assert _tables_holding(MARKER) and _redis_holding(MARKER) and _media_holding(MARKER)  # the search finds it
    before = _counts(other)
    other_tables = _tables_holding(OTHER)
    unowned = ModelCall.objects.filter(owner=None).count()

    receipt = user_data_erase(user=user).as_dict()

    assert _tables_holding(MARKER) == set()
    assert _rows_naming_user(user.pk) == set()
    assert _redis_holding(MARKER, mine["session_id"], str(mine["document"].id)) == []
    assert _media_holding(MARKER) == [] and not Path(mine["file"]).exists()
    assert not QueuedTask.objects.filter(args__contains=[str(mine["document"].id)]).exists()
    assert not Session.objects.filter(session_key__in=_sessions_of(user)).exists()
    # Another person's data, every row and its marker, is all there.
    assert _counts(other) == before
    assert _tables_holding(OTHER) == other_tables
    assert Path(theirs["file"]).exists() and _redis_holding(OTHER)
    assert working_set_get(session_id=theirs["session_id"]).resolved_terms == {"code": OTHER}
    # The receipt says what went, by kind, and that nothing was left.
    assert receipt["account"] == "kept" and receipt["complete"] and receipt["not_removed"] == []
    removed = receipt["removed"]
    for kind in ("conversations", "messages", "archives", "memories", "documents", "document nodes", "stored files"):
        assert removed[kind] >= 1, kind
    assert removed["memory history entries"] == 1 and removed["search traces"] >= 2
    assert removed["API tokens"] >= 1 and removed["jobs kept for the workers"] == 3
    assert removed["invitations"] == 1 and removed["account requests"] == 1
    assert removed["browser sessions (signed out everywhere)"] == 1
    assert list(receipt["anonymised"].values()) == [ModelCall.objects.filter(owner=None).count() - unowned]


def _sessions_of(user) -> list[str]:
    return [row.session_key for row in Session.objects.all() if row.get_decoded().get("_auth_user_id") == str(user.pk)]


def test_the_account_stays_usable_and_empty_and_every_credential_of_it_ends():
    user = UserFactory()
    _populate(user, MARKER)
    client = _client(user)
    answer = client.delete(f"/api/me/data?confirm={user.username}")
    assert answer.status_code == 200, answer.content
    assert answer.json()["removed"]["conversations"] == 1
    assert client.get("/api/sessions").status_code == 401  # the token that asked ended with the rest
    fresh = APIClient()
    signed_in = fresh.post(
        "/api/auth/token", {"username": user.username, "password": "correct horse battery staple"}, format="json"
    )
    fresh.credentials(HTTP_AUTHORIZATION=f"Token {signed_in.json()['token']}")
    assert fresh.get("/api/sessions").json()["results"] == []
    documents = fresh.get("/api/documents").json()
    assert (documents.get("results") if isinstance(documents, dict) else documents) == []


def test_erasure_asks_for_the_username_and_says_what_it_would_remove():
    user = UserFactory()
    _populate(user, MARKER)
    client = _client(user)
    refused = client.delete("/api/me/data")
    assert refused.status_code == 400
    error = refused.json()["error"]
    assert error["code"] == "confirmation_required" and error["details"]["would_remove"]["conversations"] == 1
    assert client.delete("/api/me/data", {"confirm": "someone-else"}, format="json").status_code == 400
    assert ChatSession.objects.filter(owner=user).count() == 1
    assert client.delete("/api/me/data", {"confirm": user.username}, format="json").status_code == 200
    assert ChatSession.objects.filter(owner=user).count() == 0
    assert APIClient().delete("/api/me/data").status_code == 401


def test_the_command_erases_with_a_receipt_and_can_delete_the_account():
    user = UserFactory()
    mine = _populate(user, MARKER)
    out = io.StringIO()
    call_command("erase_user", user.username, "--yes", "--delete-account", stdout=out)
    receipt = json.loads(out.getvalue())
    assert receipt["account"] == "deleted" and receipt["removed"]["documents"] == 1
    assert not type(user).objects.filter(pk=user.pk).exists()
    assert _tables_holding(MARKER) == set() and _rows_naming_user(user.pk) == set()
    assert not Path(mine["file"]).exists()


def test_a_file_already_missing_is_named_in_the_receipt():
    user = UserFactory()
    mine = _populate(user, MARKER)
    Path(mine["file"]).unlink()
    receipt = user_data_erase(user=user).as_dict()
    assert not receipt["complete"]
    assert [entry["reason"] for entry in receipt["not_removed"]] == ["already missing"]


# --- deleting one thing reaches what was made from it --------------------------------------------------


def _one_of_each(user, marker: str) -> tuple[APIClient, dict]:
    """A conversation, a document and a memory that hold ``marker``, found by searches whose traces,
    citations and working sets keep them, beside a conversation about something else."""
    client = _client(user)
    aside = client.post("/api/ai/chat", {"message": "I repair bicycles on Sundays."}, format="json").json()
    return client, {"aside": aside["session_id"], **_populate(user, marker)}


def _only_answers_quote(needle: str) -> None:
    """Nothing holds ``needle`` but the words of answers given before the delete (a conversation is
    kept as it was said)."""
    assert _tables_holding(needle) <= {("sessions_app_message", "content")}
    assert not Message.objects.filter(content__icontains=needle).exclude(role=Message.Role.ASSISTANT).exists()


def test_deleting_a_conversation_takes_it_out_of_everything_made_from_it():
    user = UserFactory()
    client, mine = _one_of_each(user, MARKER)
    later = client.post("/api/ai/chat", {"message": f"What was {MARKER} about?", "session_id": mine["aside"]}, "json")
    assert later.status_code == 200
    client.delete(f"/api/memories/{mine['memory_id']}")  # a memory of its own, tested below
    client.delete(f"/api/documents/{mine['document'].id}")
    kept_aside = Message.objects.filter(session_id=mine["aside"]).count()
    elsewhere = {("retrieval_app_queuedtask", "args"), ("retrieval_app_searchtrace", "stages")}
    assert elsewhere <= _tables_holding(mine["session_id"])  # another conversation's trace found it

    assert client.delete(f"/api/sessions/{mine['session_id']}").status_code == 204

    assert not _tables_holding(mine["session_id"])  # no trace, citation, model call or history names it
    assert _redis_holding(mine["session_id"]) == []
    assert Message.objects.filter(session_id=mine["aside"]).count() == kept_aside
    # What only that conversation said is nowhere: its words were "Remember <marker> for the trip".
    assert not _tables_holding(f"Remember {MARKER} for the trip")


def test_deleting_a_document_takes_it_out_of_traces_citations_and_working_sets():
    user, other = UserFactory(), UserFactory()
    client, mine = _one_of_each(user, MARKER)
    _populate(other, OTHER)
    before = _counts(other)
    document_id = str(mine["document"].id)
    assert _tables_holding(document_id) >= {("retrieval_app_searchtrace", "results")}

    assert client.delete(f"/api/documents/{document_id}").status_code == 204

    assert not _tables_holding(document_id)
    assert _redis_holding(document_id) == []
    assert not Path(mine["file"]).exists()
    assert working_set_get(session_id=mine["session_id"]).resolved_terms == {"code": MARKER}  # the rest stays
    assert SearchTrace.objects.filter(owner=user).count() >= 2  # the traces stay, without the document
    assert _counts(other) == before


def test_deleting_a_memory_takes_its_history_and_every_quote_of_it():
    user = UserFactory()
    client = _client(user)
    memory = client.post(
        "/api/memories", {"category": "entities", "key": "locker", "content": f"Locker code {MARKER}."}, "json"
    ).json()
    client.patch(f"/api/memories/{memory['id']}", {"content": f"Locker code {MARKER}, moved to B."}, format="json")
    found = client.post("/api/memory/recall", {"query": "my locker code", "threshold": -1.0}, format="json")
    assert found.status_code == 200
    client.post("/api/ai/chat", {"message": "What is my locker code?"}, format="json")
    kept = client.post("/api/memories", {"category": "entities", "key": "bike", "content": "A blue bike."}, "json")

    assert client.delete(f"/api/memories/{memory['id']}").status_code == 204

    _only_answers_quote(MARKER)
    assert not _tables_holding(memory["uri"] + '"')
    assert Memory.objects.filter(pk=kept.json()["id"]).exists()


def test_a_memory_drawn_from_another_conversation_too_stays_without_the_deleted_ones_history():
    user = UserFactory()
    client = _client(user)
    first = client.post("/api/ai/chat", {"message": f"I live in Porto, near {MARKER} street."}, "json").json()
    client.post(f"/api/sessions/{first['session_id']}/commit", {}, format="json")
    second = client.post("/api/ai/chat", {"message": "I live in Lisbon."}, "json").json()
    client.post(f"/api/sessions/{second['session_id']}/commit", {}, format="json")
    memory = Memory.objects.get(owner=user, content__icontains="Lisbon")

    assert client.delete(f"/api/sessions/{first['session_id']}").status_code == 204

    memory.refresh_from_db()
    assert first["session_id"] not in json.dumps(memory.history)
    assert not _tables_holding(MARKER)
