"""The chat socket under a Redis outage, through a real Daphne: the channel layer failing no longer
closes every socket with 1011; the client is told once, in the contract's error frame, chat goes on,
and the same socket notices the next outage too, since it went back to the layer once Redis returned."""

from __future__ import annotations

import asyncio
import json
import time

import pytest
import websockets
from rest_framework.authtoken.models import Token

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


async def _next(socket, timeout: float = 30) -> dict:
    return json.loads(await asyncio.wait_for(socket.recv(), timeout=timeout))


async def _turn(socket, message: str) -> list[dict]:
    await socket.send(json.dumps({"type": "chat", "message": message}))
    frames = [await _next(socket, 60)]
    while frames[-1]["type"] not in ("done", "error"):
        frames.append(await _next(socket, 60))
    return frames


async def _quiet(socket, seconds: float) -> list[dict]:
    """The frames that arrive within ``seconds`` (none expected)."""
    frames = []
    try:
        while True:
            frames.append(await _next(socket, seconds))
    except TimeoutError:
        return frames


def test_a_redis_outage_is_reported_on_the_socket_which_keeps_working(user, private_redis, daphne):
    token = Token.objects.create(user=user).key
    url = daphne.replace("http://", "ws://") + f"/ws/chat/?token={token}"

    async def run():
        async with websockets.connect(url) as socket:
            assert (await _turn(socket, "Hello there."))[-1]["type"] == "done"

            private_redis.kill()
            killed = time.monotonic()
            notice = await _next(socket, 10)
            print(f"the socket was told {time.monotonic() - killed:.2f}s after Redis died")
            assert notice["type"] == "error" and notice["code"] == "unavailable", notice
            assert set(notice) >= {"error", "session_id"}
            # The socket is open and chat works: a turn needs the database, not Redis.
            await socket.send(json.dumps({"type": "ping"}))
            assert await _next(socket) == {"type": "pong"}
            assert (await _turn(socket, "Still there?"))[-1]["type"] == "done"
            # A socket opened during the outage is accepted, told, and serves chat as well.
            async with websockets.connect(url) as late:
                late_notice = await _next(late, 10)
                assert late_notice["type"] == "error" and late_notice["code"] == "unavailable"
                assert (await _turn(late, "Anyone home?"))[-1]["type"] == "done"

            private_redis.start()
            # Redis answered again: the socket goes back to the layer within its retry delay, silently.
            assert await _quiet(socket, 10) == []
            assert (await _turn(socket, "Back to normal?"))[-1]["type"] == "done"

            private_redis.kill()  # a second outage is reported again: the layer was in use again
            second = await _next(socket, 10)
            assert second["type"] == "error" and second["code"] == "unavailable", second
            private_redis.start()

        async with websockets.connect(url) as fresh:  # a new socket once Redis is back: nothing to report
            assert (await _turn(fresh, "Hello again."))[-1]["type"] == "done"
            assert await _quiet(fresh, 3) == []

    asyncio.run(run())
