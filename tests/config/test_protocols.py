"""Standard clients against a real Daphne process: server-sent events read by an SSE client library,
chunked bodies, oversized requests, and websocket origins, each answered in the contract's shape."""

from __future__ import annotations

import asyncio
import json
import socket

import httpx
import pytest
import websockets
from django.conf import settings
from httpx_sse import connect_sse
from rest_framework.authtoken.models import Token

from sessions_app.models import Message
from tests.factories import ChatSessionFactory, UserFactory
from tests.helpers import start_daphnes, stop_processes

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

CHUNK_BYTES = 1024 * 1024


@pytest.fixture
def slow_llm_daphne(fake_llm):
    """One Daphne whose model takes a while to start answering, with keep-alives every 0.3 s."""
    fake_llm.delay_s = 1.5
    fake_llm.reply = lambda messages: "The kettle wants descaling every four weeks."
    (port,), processes = start_daphnes(
        1,
        LLM_MODEL="openai/test-chat",
        LLM_API_BASE=fake_llm.url,
        LLM_API_KEY="sk-test",
        LLM_MAX_RETRIES="0",
        SSE_KEEP_ALIVE_S="0.3",
    )
    yield f"http://127.0.0.1:{port}"
    stop_processes(processes)


@pytest.fixture
def daphne():
    (port,), processes = start_daphnes(1)
    yield f"http://127.0.0.1:{port}"
    stop_processes(processes)


@pytest.fixture
def token():
    user = UserFactory()
    return user, Token.objects.create(user=user).key


def _stream_headers(key: str, accept: str | None) -> dict[str, str]:
    headers = {"Authorization": f"Token {key}"}
    if accept is not None:
        headers["Accept"] = accept
    return headers


@pytest.mark.parametrize("accept", ["text/event-stream", "*/*", "application/json", None])
def test_an_sse_client_library_reads_the_chat_whatever_it_accepts(slow_llm_daphne, token, accept):
    _, key = token
    with (
        httpx.Client(base_url=slow_llm_daphne, timeout=30) as client,
        connect_sse(
            client,
            "POST",
            "/api/ai/chat/stream",
            json={"message": "How often to descale?"},
            headers=_stream_headers(key, accept),
        ) as source,
    ):
        assert source.response.status_code == 200
        assert source.response.headers["content-type"].startswith("text/event-stream")
        assert source.response.headers["cache-control"] == "no-cache"
        events = list(source.iter_sse())
    names = [event.event for event in events]
    assert names[0] == "context" and names[-1] == "done" and "token" in names
    assert "four weeks" in events[-1].json()["message"]


def test_a_slow_start_is_bridged_by_comments_that_sse_clients_ignore(slow_llm_daphne, token):
    _, key = token
    with (
        httpx.Client(base_url=slow_llm_daphne, timeout=30) as client,
        client.stream(
            "POST",
            "/api/ai/chat/stream",
            json={"message": "How often to descale?"},
            headers=_stream_headers(key, "text/event-stream"),
        ) as response,
    ):
        lines = list(response.iter_lines())
    comments = [line for line in lines if line.startswith(":")]
    assert comments[0] == ": stream open", "the stream opens at once, before the context is ready"
    first_token = next(index for index, line in enumerate(lines) if line == "event: token")
    assert ": keep-alive" in lines[:first_token], "while the model has not started, keep-alives flow"


def test_errors_before_the_stream_are_json_whatever_was_accepted(daphne, token):
    _, key = token
    with httpx.Client(base_url=daphne, timeout=30) as client:
        bad = client.post(
            "/api/ai/chat/stream",
            json={"message": ""},
            headers={"Authorization": f"Token {key}", "Accept": "text/event-stream"},
        )
        refused = client.post("/api/ai/chat/stream", json={"message": "hi"}, headers={"Accept": "image/png"})
    assert bad.status_code == 400 and bad.json()["error"]["code"] == "invalid"
    assert refused.status_code in (401, 406) and set(refused.json()["error"]) == {"code", "message", "details"}


def test_a_chunked_json_body_is_read_whole(daphne, token):
    user, key = token
    session = ChatSessionFactory(owner=user)
    payload = json.dumps({"messages": [{"role": "user", "content": "Sent in chunks, stored whole."}]}).encode()

    def chunks():
        for start in range(0, len(payload), 7):
            yield payload[start : start + 7]

    with httpx.Client(base_url=daphne, timeout=30) as client:
        response = client.post(
            f"/api/sessions/{session.id}/messages",
            content=chunks(),
            headers={"Authorization": f"Token {key}", "Content-Type": "application/json"},
        )
    assert response.status_code == 201, response.text
    assert list(Message.objects.filter(session=session).values_list("content", flat=True)) == [
        "Sent in chunks, stored whole."
    ]


def test_oversized_and_malformed_requests_get_the_error_shape_over_the_wire(daphne, token):
    _, key = token
    headers = {"Authorization": f"Token {key}"}
    with httpx.Client(base_url=daphne, timeout=30, headers=headers) as client:
        long_query = client.get("/api/memories", params={"category": "x" * 60_000})
        no_boundary = client.post(
            "/api/documents/upload", content=b"--x\r\n", headers={"Content-Type": "multipart/form-data"}
        )
    # A client announcing 30 MB is refused from its headers, before it sends them.
    host, port = daphne.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as raw:
        raw.sendall(
            b"POST /api/memory/recall HTTP/1.1\r\nHost: " + host.encode() + b"\r\n"
            b"Authorization: Token " + key.encode() + b"\r\nContent-Type: application/json\r\n"
            b"Content-Length: " + str(30 * 1024 * 1024).encode() + b"\r\n\r\n{}"
        )
        reply = raw.recv(65536).decode()
    assert long_query.status_code == 414 and long_query.json()["error"]["code"] == "uri_too_long"
    assert no_boundary.status_code == 400 and set(no_boundary.json()["error"]) == {"code", "message", "details"}
    assert reply.startswith("HTTP/1.1 413") and '"code": "too_large"' in reply


def _exchange(base: str, head: bytes, chunks: int = 0) -> str:
    """Sends a raw request (then, if asked, 1 MB chunks until the server stops reading) and returns its reply."""
    host, port = base.removeprefix("http://").split(":")
    with socket.create_connection((host, int(port)), timeout=30) as raw:
        raw.sendall(head)
        chunk = b"%x\r\n" % CHUNK_BYTES + b" " * CHUNK_BYTES + b"\r\n"
        try:
            for _ in range(chunks):
                raw.sendall(chunk)
        except OSError:  # refused midway: the answer is already waiting
            pass
        reply = b""
        while data := raw.recv(65536):
            reply += data
    return reply.decode()


def test_a_malformed_request_gets_the_error_shape_not_a_bare_400(daphne):
    reply = _exchange(daphne, b"GET /api/health HTTP/1.1\r\nHost: x\r\nno colon in this header\r\n\r\n")
    assert reply.startswith("HTTP/1.1 400") and '"code": "bad_request"' in reply


def test_a_chunked_body_is_refused_as_soon_as_it_grows_past_the_limit(daphne, token):
    _, key = token
    head = (
        b"POST /api/memory/recall HTTP/1.1\r\nHost: x\r\nAuthorization: Token " + key.encode() + b"\r\n"
        b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
    )
    reply = _exchange(daphne, head, chunks=settings.API_MAX_BODY_BYTES // CHUNK_BYTES + 2)
    assert reply.startswith("HTTP/1.1 413") and '"code": "too_large"' in reply


def test_a_websocket_from_a_page_on_another_port_is_refused(daphne, token):
    _, key = token
    port = daphne.rsplit(":", 1)[1]
    url = f"ws://127.0.0.1:{port}/ws/chat/?token={key}"

    async def opens(origin: str | None) -> bool:
        try:
            async with websockets.connect(url, origin=origin) as socket:
                await socket.send(json.dumps({"type": "ping"}))
                return json.loads(await asyncio.wait_for(socket.recv(), timeout=10)) == {"type": "pong"}
        except websockets.InvalidStatus:
            return False

    assert asyncio.run(opens(f"http://127.0.0.1:{port}")), "the site's own pages may open a socket"
    assert asyncio.run(opens(None)), "integrations without an Origin authenticate by token"
    assert not asyncio.run(opens("http://127.0.0.1:9999")), "another port on the same host is another origin"
    assert not asyncio.run(opens("http://localhost:3000"))
    assert not asyncio.run(opens("https://evil.example"))


def test_open_streams_do_not_exhaust_the_database_pool(fake_llm, token):
    """Eight slow streams on a process with four database connections: each stream's request gives its
    connection back once the turn is prepared, so every stream finishes and other requests still pass."""
    fake_llm.token_delay_s = 0.05
    fake_llm.reply = lambda messages: " ".join(["steady"] * 40)
    _, key = token
    (port,), processes = start_daphnes(
        1,
        LLM_MODEL="openai/test-chat",
        LLM_API_BASE=fake_llm.url,
        LLM_API_KEY="sk-test",
        LLM_MAX_RETRIES="0",
        DATABASE_POOL_SIZE="4",
        DATABASE_POOL_TIMEOUT_S="3",
    )
    headers = {"Authorization": f"Token {key}", "Accept": "text/event-stream"}

    async def stream(client: httpx.AsyncClient, answering: asyncio.Event) -> list[str]:
        events = []
        async with client.stream("POST", "/api/ai/chat/stream", json={"message": "Talk a while."}) as response:
            assert response.status_code == 200
            async for line in response.aiter_lines():
                if line.startswith("event: "):
                    events.append(line)
                if line == "event: token":
                    answering.set()
        answering.set()  # an answer without tokens still lets the listing go ahead
        return events

    async def run():
        async with httpx.AsyncClient(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=60) as client:
            answering = [asyncio.Event() for _ in range(8)]
            streams = [asyncio.create_task(stream(client, started)) for started in answering]
            await asyncio.wait_for(asyncio.gather(*(started.wait() for started in answering)), timeout=30)
            listing = await client.get("/api/sessions", headers={"Accept": "application/json"})
            return await asyncio.gather(*streams), listing

    try:
        results, listing = asyncio.run(run())
    finally:
        stop_processes(processes)
    assert listing.status_code == 200, "a plain request is served while streams are open"
    assert all(events[-1] == "event: done" for events in results), [events[-1:] for events in results]
