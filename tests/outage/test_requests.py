"""Redis killed under a running server: requests that write keep answering at once, with their
follow-up work (embedding the turns, indexing the upload) kept in PostgreSQL, and that work is done
once Redis is back, without anyone asking again."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
import uuid

import pytest
from rest_framework.authtoken.models import Token

from documents_app.models import Document
from foundation.models import QueuedTask
from sessions_app.models import Message
from tests.samples import KETTLE

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


def _call(base: str, path: str, token: str, body: dict | None = None) -> tuple[int, dict, float]:
    request = urllib.request.Request(
        base + path,
        data=None if body is None else json.dumps(body).encode(),
        headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
    )
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            status, payload = response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        status, payload = error.code, json.loads(error.read() or b"{}")
    return status, payload, time.monotonic() - started


def _upload(base: str, token: str, name: str, data: bytes) -> tuple[int, dict, float]:
    boundary = uuid.uuid4().hex
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n"
        ).encode()
        + data
        + f"\r\n--{boundary}--\r\n".encode()
    )
    request = urllib.request.Request(
        f"{base}/api/documents/upload",
        data=body,
        headers={"Authorization": f"Token {token}", "Content-Type": f"multipart/form-data; boundary={boundary}"},
    )
    started = time.monotonic()
    with urllib.request.urlopen(request, timeout=60) as response:
        return response.status, json.loads(response.read()), time.monotonic() - started


def _wait_until(condition, timeout: float, what: str) -> float:
    started = time.monotonic()
    while not condition():
        assert time.monotonic() - started < timeout, f"{what} did not happen within {timeout}s"
        time.sleep(0.5)
    return time.monotonic() - started


def test_with_redis_killed_writes_answer_at_once_and_their_work_is_done_once_it_is_back(
    user, private_redis, daphne, worker
):
    token = Token.objects.create(user=user).key
    status, session, _ = _call(daphne, "/api/sessions", token, {"title": "kitchen"})
    assert status == 201
    session_id = session["session_id"]
    # Redis up: the worker embeds an appended turn (and the local model is loaded in Daphne by a chat,
    # so that the timings below measure the outage, not a first start).
    status, appended, _ = _call(
        daphne, f"/api/sessions/{session_id}/messages", token, {"messages": [{"role": "user", "content": "hello"}]}
    )
    assert status == 201
    _wait_until(lambda: Message.objects.filter(pk__in=appended["ids"], embedding__isnull=False).exists(), 90, "embed")
    assert _call(daphne, "/api/ai/chat", token, {"message": "Any kettle tips?", "session_id": session_id})[0] == 200

    private_redis.kill()

    status, appended, append_s = _call(
        daphne,
        f"/api/sessions/{session_id}/messages",
        token,
        {"messages": [{"role": "user", "content": "The Aurora kettle needs descaling every four weeks."}]},
    )
    assert status == 201, appended
    status, chat, chat_s = _call(
        daphne, "/api/ai/chat", token, {"message": "How often do I descale the kettle?", "session_id": session_id}
    )
    assert status == 200, chat
    status, recall, recall_s = _call(daphne, "/api/memory/recall", token, {"query": "descaling the kettle"})
    assert status == 200, recall
    status, document, upload_s = _upload(daphne, token, "kettle.md", KETTLE)
    assert status == 202 and document["status"] == "pending", document
    timings = f"append {append_s:.2f}s, chat {chat_s:.2f}s, recall {recall_s:.2f}s, upload {upload_s:.2f}s"
    print(f"with Redis down: {timings}")
    # Before, each of these waited 19 s per job it queued (Celery retrying the result store), 38 s for a chat.
    assert append_s < 2 and upload_s < 2 and recall_s < 2, (append_s, upload_s, recall_s)
    assert chat_s < 5, chat_s  # a chat turn also embeds the question and writes the answer
    kept = set(QueuedTask.objects.values_list("task", flat=True))
    assert {"core.embed_rows", "documents.index_document"} <= kept

    private_redis.start()

    turns = Message.objects.filter(session_id=session_id)
    caught_up = _wait_until(
        lambda: (
            # What was said is embedded; the built-in answers are the product's own words, never embedded.
            not turns.said().filter(embedding__isnull=True).exists()
            and Document.objects.get(pk=document["doc_id"]).status == Document.Status.READY
        ),
        120,
        "catching up once Redis was back",
    )
    print(f"caught up {caught_up:.1f}s after Redis came back")
    assert not QueuedTask.objects.exists()
    assert turns.count() >= 5  # hello, the first exchange, the appended turn, the second exchange
