"""The chat websocket, in process through the full ASGI stack (origin check, cookie and token auth):
context, token and done events, cancel, one user never seeing another's events, and malformed frames."""

from __future__ import annotations

import asyncio
import json

import pytest
from asgiref.sync import async_to_sync, sync_to_async
from channels.testing import WebsocketCommunicator
from rest_framework.authtoken.models import Token

from config.asgi import application
from sessions_app.models import Message
from tests.factories import UserFactory, index_document
from tests.samples import KETTLE

pytestmark = pytest.mark.django_db(transaction=True)


def _token(user) -> str:
    return Token.objects.get_or_create(user=user)[0].key


async def _connect(token: str = "", headers=None) -> tuple[WebsocketCommunicator, bool]:
    path = f"/ws/chat/?token={token}" if token else "/ws/chat/"
    communicator = WebsocketCommunicator(application, path, headers=headers or [])
    connected, _ = await communicator.connect(timeout=10)
    return communicator, connected


async def _until_end(communicator: WebsocketCommunicator, timeout: float = 30) -> list[dict]:
    frames = []
    while True:
        frame = json.loads(await communicator.receive_from(timeout=timeout))
        frames.append(frame)
        if frame["type"] in ("done", "error"):
            return frames


def test_a_chat_over_the_websocket_gets_the_contracts_events(user):
    index_document(user, "kettle.md", KETTLE)
    token = _token(user)

    async def run():
        communicator, connected = await _connect(token)
        assert connected
        await communicator.send_to(
            text_data=json.dumps({"type": "chat", "message": "Tell me about the Aurora kettle."})
        )
        first = await _until_end(communicator)
        session_id = first[0]["session_id"]
        follow = {"type": "chat", "message": "how often should I descale it?", "session_id": session_id}
        await communicator.send_to(text_data=json.dumps(follow))
        second = await _until_end(communicator)
        await communicator.disconnect()
        return first, second

    first, second = async_to_sync(run)()
    for frames in (first, second):
        kinds = [f["type"] for f in frames]
        assert kinds[0] == "context" and kinds[-1] == "done" and set(kinds[1:-2]) == {"token"} and kinds[-2] == "mood"
        assert "".join(f["token"] for f in frames if f["type"] == "token") == frames[-1]["message"]
    assert "four weeks" in second[-1]["message"]


def test_cancel_stops_the_answer_and_records_it_as_partial(user, hosted_llm, fake_llm):
    fake_llm.reply = lambda messages: " ".join(f"word{i}" for i in range(200))
    fake_llm.token_delay_s = 0.02
    token = _token(user)

    async def run():
        communicator, _ = await _connect(token)
        await communicator.send_to(text_data=json.dumps({"type": "chat", "message": "Say many words."}))
        frames = [json.loads(await communicator.receive_from(timeout=30)) for _ in range(4)]
        await communicator.send_to(text_data=json.dumps({"type": "cancel"}))
        frames += await _until_end(communicator)
        await communicator.disconnect()
        return frames

    frames = async_to_sync(run)()
    done = frames[-1]
    assert done["type"] == "done" and done["status"] == "cancelled"
    assert 0 < len(done["message"].split()) < 200
    answer = Message.objects.get(session_id=done["session_id"], role="assistant")
    assert answer.metadata["status"] == "cancelled" and answer.content == done["message"]


def test_a_client_that_disconnects_mid_stream_leaves_its_turn_and_a_partial_answer(user, hosted_llm, fake_llm):
    fake_llm.reply = lambda messages: " ".join(f"word{i}" for i in range(300))
    fake_llm.token_delay_s = 0.02
    token = _token(user)

    async def run():
        communicator, _ = await _connect(token)
        await communicator.send_to(text_data=json.dumps({"type": "chat", "message": "Talk for a while."}))
        context = json.loads(await communicator.receive_from(timeout=30))
        await communicator.receive_from(timeout=30)  # a first token
        await communicator.disconnect()
        for _ in range(100):  # the turn notices within a token or two
            if await asyncio.to_thread(
                lambda: Message.objects.filter(session_id=context["session_id"], role="assistant").exists()
            ):
                break
            await asyncio.sleep(0.05)
        return context["session_id"]

    session_id = async_to_sync(run)()
    rows = list(Message.objects.filter(session_id=session_id).order_by("seq"))
    assert [r.role for r in rows] == ["user", "assistant"]
    assert rows[1].metadata["status"] == "disconnected" and rows[1].content


def test_unauthenticated_sockets_are_refused():
    async def run():
        _, anonymous = await _connect()
        _, bad_token = await _connect("not-a-token")
        return anonymous, bad_token

    assert async_to_sync(run)() == (False, False)


def test_a_header_token_authenticates_and_a_foreign_origin_is_refused(user):
    token = _token(user)

    async def run():
        communicator, ok = await _connect(headers=[(b"authorization", f"Token {token}".encode())])
        await communicator.disconnect()
        _, foreign = await _connect(token, headers=[(b"origin", b"https://evil.example")])
        return ok, foreign

    assert async_to_sync(run)() == (True, False)


def test_malformed_frames_get_error_events_and_the_socket_stays_usable(user):
    from sessions_app.services import session_create

    other_session = str(session_create(owner=UserFactory()).id)
    token = _token(user)

    async def run():
        communicator, _ = await _connect(token)
        replies = []
        for frame in [
            "not json",
            "[1, 2]",
            json.dumps({"no": "type"}),
            json.dumps({"type": "dance"}),
            '{"type": "chat", "message": "half a pair \\ud800"}',
        ]:
            await communicator.send_to(text_data=frame)
            replies.append(json.loads(await communicator.receive_from(timeout=10)))
        await communicator.send_to(bytes_data=b"\x00\x01")
        replies.append(json.loads(await communicator.receive_from(timeout=10)))
        for body in (
            {"type": "chat", "message": ""},
            {"type": "chat", "message": "x" * 40_000},
            {"type": "chat", "message": "hi", "session_id": other_session},
            {"type": "cancel"},
        ):
            await communicator.send_to(text_data=json.dumps(body))
            replies.append(json.loads(await communicator.receive_from(timeout=10)))
        await communicator.send_to(text_data=json.dumps({"type": "chat", "message": "still there?"}))
        last = await _until_end(communicator)
        await communicator.disconnect()
        return replies, last

    replies, last = async_to_sync(run)()
    assert all(r["type"] == "error" and r["error"] for r in replies)
    codes = [r["code"] for r in replies]
    assert codes[:6] == ["invalid_frame"] * 6
    assert codes[6:] == ["invalid", "message_too_long", "session_not_found", "nothing_to_cancel"]
    assert last[-1]["type"] == "done"
    assert not Message.objects.filter(session_id=other_session).exists()


def test_two_users_chatting_at_once_each_see_only_their_own_events(user):
    other = UserFactory()
    index_document(user, "kettle.md", KETTLE)
    mine_token, their_token = _token(user), _token(other)

    async def chat(token: str, message: str) -> list[dict]:
        communicator, _ = await _connect(token)
        await communicator.send_to(text_data=json.dumps({"type": "chat", "message": message}))
        frames = await _until_end(communicator)
        await communicator.disconnect()
        return frames

    async def run():
        return await asyncio.gather(
            chat(mine_token, "How do I descale the Aurora kettle?"), chat(their_token, "What is my tea order?")
        )

    mine, theirs = async_to_sync(run)()
    my_session = mine[0]["session_id"]
    their_session = theirs[0]["session_id"]
    assert my_session != their_session
    assert all(f.get("session_id") == my_session for f in mine)
    assert all(f.get("session_id") == their_session for f in theirs)
    assert not any("kettle" in json.dumps(f).lower() for f in theirs[:1])  # their context holds none of my documents


def test_the_chat_page_signs_in_and_its_session_cookie_opens_the_socket(client, user):
    assert client.get("/chat/").status_code == 302  # to the sign-in form
    user.set_password("a long enough password")
    user.save()
    response = client.post("/accounts/login/", {"username": user.username, "password": "a long enough password"})
    assert response.status_code == 302 and response["Location"] == "/chat/"
    page = client.get("/chat/")
    assert page.status_code == 200 and b"recollect/app/common.js" in page.content  # which opens /ws/chat/
    cookie = f"sessionid={client.cookies['sessionid'].value}".encode()

    async def run():
        communicator, connected = await _connect(
            headers=[(b"cookie", cookie), (b"origin", b"http://testserver"), (b"host", b"testserver")]
        )
        if connected:
            await communicator.send_to(text_data=json.dumps({"type": "ping"}))
            reply = json.loads(await communicator.receive_from(timeout=10))
            await communicator.disconnect()
            return reply
        return None

    assert async_to_sync(run)() == {"type": "pong"}


def test_a_frame_refused_while_an_answer_streams_does_not_end_that_answer(user, hosted_llm, fake_llm):
    fake_llm.reply = lambda messages: " ".join(f"word{i}" for i in range(60))
    fake_llm.token_delay_s = 0.01
    token = _token(user)

    async def run():
        communicator, _ = await _connect(token)
        await communicator.send_to(text_data=json.dumps({"type": "chat", "message": "Count slowly."}))
        first = json.loads(await communicator.receive_from(timeout=30))
        await communicator.send_to(text_data=json.dumps({"type": "chat", "message": "And another thing."}))
        await communicator.send_to(text_data="[[[" * 5000)
        frames = [first, *await _until_end(communicator)]
        await communicator.disconnect()
        return frames

    frames = async_to_sync(run)()
    rejected = [f for f in frames if f["type"] == "rejected"]
    assert [f["code"] for f in rejected] == ["busy", "invalid_frame"]
    assert frames[-1]["type"] == "done" and len(frames[-1]["message"].split()) == 60


def _signed_in_cookie(client, user) -> bytes:
    user.set_password("a long enough password")
    user.save()
    client.post("/accounts/login/", {"username": user.username, "password": "a long enough password"})
    return f"sessionid={client.cookies['sessionid'].value}".encode()


BROWSER = [(b"origin", b"http://testserver"), (b"host", b"testserver")]


def test_signing_out_closes_that_browsers_open_sockets_at_once_and_no_other(client, user):
    cookie = _signed_in_cookie(client, user)
    token = _token(user)

    async def after(browser, agent):
        frame = json.loads(await browser.receive_from(timeout=10))
        closed = await browser.receive_output(timeout=10)
        await agent.send_to(text_data=json.dumps({"type": "ping"}))
        pong = json.loads(await agent.receive_from(timeout=10))
        await agent.disconnect()
        return frame, closed, pong

    # The sign-out is an ordinary request in another tab, made while both sockets are open.
    async def whole():
        browser, _ = await _connect(headers=[(b"cookie", cookie), *BROWSER])
        agent, _ = await _connect(token)
        await asyncio.sleep(0.5)
        response = await sync_to_async(client.post)("/accounts/logout/")
        assert response.status_code == 302
        return await after(browser, agent)

    frame, closed, pong = async_to_sync(whole)()
    assert frame["type"] == "error" and frame["code"] == "signed_out" and "signed out" in frame["error"]
    assert closed == {"type": "websocket.close", "code": 4401}
    assert pong == {"type": "pong"}  # the integration's token socket goes on


def test_a_socket_whose_browser_signed_out_answers_no_more_turns_even_if_the_news_was_missed(client, user):
    cookie = _signed_in_cookie(client, user)

    async def run():
        browser, _ = await _connect(headers=[(b"cookie", cookie), *BROWSER])
        await sync_to_async(client.session.flush)()  # the session ends without any push (e.g. Redis was down)
        await browser.send_to(text_data=json.dumps({"type": "chat", "message": "Are you still there?"}))
        frame = json.loads(await browser.receive_from(timeout=10))
        closed = await browser.receive_output(timeout=10)
        return frame, closed

    frame, closed = async_to_sync(run)()
    assert frame["code"] == "signed_out" and closed["code"] == 4401
    assert not Message.objects.filter(content="Are you still there?").exists()
