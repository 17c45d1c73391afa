"""Chat through real Daphne processes sharing the Redis channel layer, with a websocket client library:
a conversation started on one process continues on another, an idle socket stays open, and two users
chatting at once on one process each receive only their own events."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request

import pytest
import websockets
from rest_framework.authtoken.models import Token

from sessions_app.models import Message
from tests.factories import UserFactory, index_document
from tests.helpers import start_daphnes, stop_processes
from tests.samples import KETTLE

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


_start_daphnes, _stop = start_daphnes, stop_processes


@pytest.fixture
def daphnes():
    ports, processes = _start_daphnes(2)
    yield ports
    _stop(processes)


async def _turn(socket, **body) -> list[dict]:
    await socket.send(json.dumps({"type": "chat", **body}))
    frames = []
    while True:
        frame = json.loads(await asyncio.wait_for(socket.recv(), timeout=60))
        frames.append(frame)
        if frame["type"] in ("done", "error"):
            return frames


def test_a_conversation_moves_between_daphne_processes(user, daphnes):
    index_document(user, "kettle.md", KETTLE)
    token = Token.objects.create(user=user).key
    stranger = Token.objects.create(user=UserFactory()).key
    first_port, second_port = daphnes

    async def run():
        headers = {"Authorization": f"Token {token}"}
        async with websockets.connect(f"ws://127.0.0.1:{first_port}/ws/chat/", additional_headers=headers) as ws:
            opening = await _turn(ws, message="Tell me about the Aurora kettle.")
            # Idle for longer than redis-py's default read timeout: the socket must survive it.
            await asyncio.sleep(6)
            await ws.send(json.dumps({"type": "ping"}))
            pong = json.loads(await asyncio.wait_for(ws.recv(), timeout=10))
        session_id = opening[0]["session_id"]
        async with (
            websockets.connect(f"ws://127.0.0.1:{second_port}/ws/chat/?token={token}") as mine,
            websockets.connect(f"ws://127.0.0.1:{second_port}/ws/chat/?token={stranger}") as theirs,
        ):
            follow_up, other = await asyncio.gather(
                _turn(mine, message="how often should I descale it?", session_id=session_id),
                _turn(theirs, message="What do you know about kettles?"),
            )
        return opening, pong, follow_up, other

    opening, pong, follow_up, other = asyncio.run(run())
    assert opening[-1]["type"] == "done" and pong == {"type": "pong"}
    assert follow_up[-1]["type"] == "done" and "four weeks" in follow_up[-1]["message"]
    assert {f["session_id"] for f in follow_up} == {opening[0]["session_id"]}
    assert other[-1]["type"] == "done"
    assert opening[0]["session_id"] not in {f.get("session_id") for f in other}
    assert other[0]["context"] == []  # none of the first user's documents


def test_a_server_sent_events_client_that_hangs_up_leaves_its_turn_and_a_partial_answer(user, fake_llm):
    fake_llm.reply = lambda messages: " ".join(f"word{i}" for i in range(400))
    fake_llm.token_delay_s = 0.02
    token = Token.objects.create(user=user).key
    (port,), processes = _start_daphnes(
        1, LLM_MODEL="openai/test-chat", LLM_API_BASE=fake_llm.url, LLM_API_KEY="sk-test", LLM_MAX_RETRIES="0"
    )
    try:
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/ai/chat/stream",
            data=json.dumps({"message": "Talk for a while, please."}).encode(),
            headers={"Authorization": f"Token {token}", "Content-Type": "application/json"},
        )
        response = urllib.request.urlopen(request, timeout=30)
        assert response.headers["Content-Type"].startswith("text/event-stream")
        head = b""
        while head.count(b"event: token") < 3:  # the answer is streaming
            head += response.read1(4096)
        session_id = json.loads(head.split(b"data: ", 1)[1].split(b"\n", 1)[0])["session_id"]
        response.close()  # the client goes away mid-answer

        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            answer = Message.objects.filter(session_id=session_id, role="assistant").first()
            if answer is not None:
                break
            time.sleep(0.2)
        assert answer is not None, "the partial answer was never recorded"
        assert answer.metadata["status"] == "disconnected"
        assert 0 < len(answer.content.split()) < 400
        assert Message.objects.filter(session_id=session_id, role="user").count() == 1
        # The server is still healthy for the next request.
        assert urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=5).status == 200
    finally:
        _stop(processes)
