"""Credentials on the real stack (Daphne processes on the test database and Redis): an open websocket or
event stream ends within a second of its token being revoked, its person deactivated or their password
changed, and the next turn is refused even if that news was missed; Daphne taking client addresses from
X-Forwarded-For (``--proxy-headers``) refuses to start with NUM_PROXIES=0, and with NUM_PROXIES set a
forged header does not dodge the sign-in throttle."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest
import websockets
from django.core.cache import cache
from django.test import Client

from accounts_app import tokens
from accounts_app.models import ApiToken
from sessions_app.models import Message
from tests.factories import UserFactory
from tests.helpers import ROOT, free_port, server_env, start_daphnes, stop_processes

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

PASSWORD = "correct horse battery staple"
# The promise: an open socket or stream learns within a second that its credential ended.
WITHIN_S = 1.0
UNAUTHENTICATED = 4401


@pytest.fixture
def daphne():
    (port,), processes = start_daphnes(1)
    yield port
    stop_processes(processes)


@pytest.fixture
def person():
    user = UserFactory()
    user.set_password(PASSWORD)
    user.save()
    return user


async def _ping(ws) -> dict:
    await ws.send(json.dumps({"type": "ping"}))
    return json.loads(await asyncio.wait_for(ws.recv(), timeout=10))


async def _ended_within(ws, seconds: float) -> tuple[dict, int, float]:
    """The signed-out frame, the close code and how long after the call they came."""
    started = time.monotonic()
    frame = json.loads(await asyncio.wait_for(ws.recv(), timeout=10))
    with pytest.raises(websockets.ConnectionClosed):
        await asyncio.wait_for(ws.recv(), timeout=10)
    return frame, ws.close_code, time.monotonic() - started


def _rest_status(port: int, key: str) -> int:
    request = urllib.request.Request(f"http://127.0.0.1:{port}/api/sessions", headers={"Authorization": f"Token {key}"})
    try:
        return urllib.request.urlopen(request, timeout=10).status
    except urllib.error.HTTPError as error:
        return error.code


def _socket_refused(url: str, **kwargs) -> bool:
    async def attempt() -> bool:
        try:
            async with websockets.connect(url, **kwargs) as ws:
                await _ping(ws)
        except (websockets.InvalidStatus, websockets.ConnectionClosed):
            return True
        return False

    return asyncio.run(attempt())


def _end_while_open(url: str, end, **kwargs) -> tuple[dict, dict, int, float]:
    """Opens a socket, checks it answers, ends its credential (``end()``, in a thread, as another request
    would) and waits for the socket's end."""

    async def run():
        async with websockets.connect(url, **kwargs) as ws:
            pong = await _ping(ws)
            await asyncio.sleep(0.3)  # the socket has joined its user's group
            started = time.monotonic()
            await asyncio.to_thread(end)
            frame, code, _ = await _ended_within(ws, 10)
            return pong, frame, code, time.monotonic() - started

    return asyncio.run(run())


def test_a_socket_ends_within_a_second_of_its_token_being_revoked(daphne, person):
    token, key = tokens.api_token_create(user=person, name="voice agent")
    browser = Client()
    browser.force_login(person)
    url = f"ws://127.0.0.1:{daphne}/ws/chat/?token={key}"

    def revoke():
        browser.post("/account/", {"action": "revoke", "token_id": token.pk})

    pong, frame, code, took = _end_while_open(url, revoke)
    assert pong == {"type": "pong"}
    assert frame["type"] == "error" and frame["code"] == "signed_out" and code == UNAUTHENTICATED
    assert took < WITHIN_S + 0.5, took  # the revoking request's own time included
    assert _rest_status(daphne, key) == 401
    assert _socket_refused(url)


def test_a_socket_ends_within_a_second_of_its_person_being_deactivated(daphne, person):
    _, key = tokens.api_token_create(user=person, name="agent")

    def deactivate():
        person.is_active = False
        person.save(update_fields=["is_active"])

    _, frame, code, took = _end_while_open(f"ws://127.0.0.1:{daphne}/ws/chat/?token={key}", deactivate)
    assert frame["code"] == "signed_out" and code == UNAUTHENTICATED and took < WITHIN_S + 0.5, took
    assert _rest_status(daphne, key) == 401


def _cookie_headers(client: Client, port: int) -> dict[str, str]:
    return {"Cookie": f"sessionid={client.cookies['sessionid'].value}", "Origin": f"http://127.0.0.1:{port}"}


def test_a_socket_opened_with_an_old_session_ends_when_the_password_changes(daphne, person):
    attacker, owner = Client(), Client()
    attacker.force_login(person)
    owner.force_login(person)
    headers = _cookie_headers(attacker, daphne)
    url = f"ws://127.0.0.1:{daphne}/ws/chat/"
    new = "another long passphrase"

    def change_password():
        data = {"old_password": PASSWORD, "new_password1": new, "new_password2": new}
        assert owner.post("/account/password/", data).status_code == 302

    _, frame, code, took = _end_while_open(url, change_password, additional_headers=headers)
    assert frame["code"] == "signed_out" and code == UNAUTHENTICATED and took < WITHIN_S + 0.5, took
    assert _socket_refused(url, additional_headers=headers)
    # The owner's own browser, whose session followed the new password, goes on.
    assert not _socket_refused(url, additional_headers=_cookie_headers(owner, daphne))


def test_the_next_turn_is_refused_even_when_the_news_was_missed(daphne, person):
    """The token goes without any push (as when Redis is down): the socket's check before a turn holds."""
    token, key = tokens.api_token_create(user=person, name="agent")

    async def run():
        async with websockets.connect(f"ws://127.0.0.1:{daphne}/ws/chat/?token={key}") as ws:
            await _ping(ws)
            await asyncio.to_thread(ApiToken.objects.filter(pk=token.pk).delete)  # no announcement
            assert await _ping(ws) == {"type": "pong"}  # nothing told it yet; a ping reads nothing
            await ws.send(json.dumps({"type": "chat", "message": "Anything about my kettle?"}))
            frame, code, _ = await _ended_within(ws, 10)
            return frame, code

    frame, code = asyncio.run(run())
    assert frame["code"] == "signed_out" and code == UNAUTHENTICATED
    assert not Message.objects.filter(content="Anything about my kettle?").exists()


@pytest.fixture
def slow_daphne(fake_llm):
    """A Daphne whose answers stream for a good while (a model on loopback, 600 words, 20 ms each)."""
    fake_llm.reply = lambda messages: " ".join(f"word{i}" for i in range(600))
    fake_llm.token_delay_s = 0.02
    (port,), processes = start_daphnes(
        1, LLM_MODEL="openai/test-chat", LLM_API_BASE=fake_llm.url, LLM_API_KEY="sk-test", LLM_MAX_RETRIES="0"
    )
    yield port
    stop_processes(processes)


CSRF = "c" * 32  # a browser's CSRF cookie and header, as the chat page sends them


def _stream_signed_in_by(how: str, person, port: int) -> tuple[dict[str, str], object]:
    """The headers a stream is opened with, and what ends that credential."""
    if how == "cookie":
        owner, attacker = Client(), Client()
        owner.force_login(person)
        attacker.force_login(person)
        headers = {
            "Cookie": f"sessionid={attacker.cookies['sessionid'].value}; csrftoken={CSRF}",
            "X-CSRFToken": CSRF,
            "Origin": f"http://127.0.0.1:{port}",
        }
        new = "another long passphrase"
        data = {"old_password": PASSWORD, "new_password1": new, "new_password2": new}
        return headers, lambda: owner.post("/account/password/", data)
    token, key = tokens.api_token_create(user=person, name="agent")
    if how == "revoked":
        return {"Authorization": f"Token {key}"}, lambda: tokens.api_token_revoke(user=person, token_id=token.pk)

    def deactivate():
        person.is_active = False
        person.save(update_fields=["is_active"])

    return {"Authorization": f"Token {key}"}, deactivate


@pytest.mark.parametrize("how", ["revoked", "deactivated", "cookie"])
def test_an_event_stream_ends_within_a_second_of_its_credential_ending(how, person, slow_daphne):
    headers, end = _stream_signed_in_by(how, person, slow_daphne)
    request = urllib.request.Request(
        f"http://127.0.0.1:{slow_daphne}/api/ai/chat/stream",
        data=json.dumps({"message": "Talk for a while, please."}).encode(),
        headers={**headers, "Content-Type": "application/json"},
    )
    response = urllib.request.urlopen(request, timeout=30)
    head = b""
    while head.count(b"event: token") < 3:  # the answer is streaming
        head += response.read1(4096)
    session_id = json.loads(head.split(b"data: ", 1)[1].split(b"\n", 1)[0])["session_id"]
    ended_at = time.monotonic()
    end()
    rest = b""
    while chunk := response.read1(4096):
        rest += chunk
    took = time.monotonic() - ended_at
    assert b"event: error" in rest and b"signed_out" in rest and b"event: done" not in rest
    assert took < WITHIN_S + 0.5, took
    deadline = time.monotonic() + 20
    while (answer := Message.objects.filter(session_id=session_id, role="assistant").first()) is None:
        assert time.monotonic() < deadline, "the partial answer was never recorded"
        time.sleep(0.2)
    assert answer.metadata["status"] == "disconnected" and len(answer.content.split()) < 600


def _daphne_with_proxy_headers(log: Path, **env: str) -> tuple[subprocess.Popen, int]:
    port = free_port()
    argv = [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "--proxy-headers"]
    with open(log, "a") as output:
        process = subprocess.Popen(
            [*argv, "config.asgi:application"],
            cwd=ROOT,
            env=server_env(**env),
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    return process, port


def test_daphne_with_proxy_headers_and_no_proxies_refuses_to_start():
    log = Path(tempfile.mkdtemp(prefix="recollect-daphne-")) / "daphne.log"
    process, _ = _daphne_with_proxy_headers(log, NUM_PROXIES="0")
    try:
        assert process.wait(timeout=60) != 0
    finally:
        if process.poll() is None:
            stop_processes([process])
    said = log.read_text()
    assert "NUM_PROXIES" in said and "--proxy-headers" in said


def test_a_forged_x_forwarded_for_does_not_dodge_the_sign_in_throttle_behind_a_proxy(person):
    """Daphne with --proxy-headers behind one proxy (NUM_PROXIES=1): the client writes any left part of
    X-Forwarded-For; the proxy appends the address it saw (here 127.0.0.1), which the throttle keys on."""
    cache.clear()
    log = Path(tempfile.mkdtemp(prefix="recollect-daphne-")) / "daphne.log"
    process, port = _daphne_with_proxy_headers(log, NUM_PROXIES="1")
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, log.read_text()[-3000:]
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=2)
                break
            except OSError:
                assert time.monotonic() < deadline, "Daphne did not start"
                time.sleep(0.3)

        def attempt(index: int, password: str) -> int:
            request = urllib.request.Request(
                f"http://127.0.0.1:{port}/api/auth/token",
                data=json.dumps({"username": person.username, "password": password}).encode(),
                headers={"Content-Type": "application/json", "X-Forwarded-For": f"198.51.100.{index}, 127.0.0.1"},
            )
            try:
                return urllib.request.urlopen(request, timeout=10).status
            except urllib.error.HTTPError as error:
                return error.code

        answers = [attempt(index, f"guess {index}") for index in range(30)]
        assert answers[:20] == [400] * 20 and set(answers[20:]) == {429}, answers
        assert attempt(99, PASSWORD) == 429
    finally:
        stop_processes([process])
        cache.clear()
