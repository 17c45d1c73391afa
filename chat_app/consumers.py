"""The chat websocket: thin; it validates frames and relays the turn pipeline's events.

The client sends ``{"type": "chat", ...the chat body}`` and receives ``context``, ``token``... then
``done`` or ``error`` frames; ``{"type": "cancel"}`` stops the answer in flight. One answer at a time
per socket: a frame refused while one streams gets a ``rejected`` frame, which does not end that
answer. Every frame goes to this socket alone, so one user never receives another's events.

The socket also carries what changes for its user elsewhere (a document's status, a commit's memories):
it joins the user's group (``foundation.push``) and relays those as ``document`` and ``commit``
frames, so pages follow them without polling.

The socket listens on the channel layer too (Redis). When Redis is down, the layer's receive fails;
rather than end the socket (Channels would close it with 1011), the client gets one ``error`` frame
with the code ``unavailable`` and the socket goes on: a turn needs the database, not Redis. The layer
is tried again, less and less often, until Redis answers, and a later outage is reported again.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
from datetime import datetime

from channels.db import DatabaseSyncToAsync
from channels.generic.websocket import AsyncWebsocketConsumer
from django.utils import timezone
from redis.exceptions import RedisError
from rest_framework.exceptions import ParseError
from tenacity import AsyncRetrying, retry_if_exception_type, wait_exponential

from accounts_app.credentials import (
    CREDENTIALS_CHANGED_EVENT,
    SIGNED_OUT_CODE,
    SIGNED_OUT_MESSAGE,
    Credential,
    credential_for_session,
    credential_holds,
)
from chat_app import events
from chat_app import services as chat
from chat_app.api.serializers import ChatInSerializer
from chat_app.concurrency import Cancellation
from chat_app.streaming import chat_events
from foundation.exceptions import DATABASE_DOWN_MESSAGE, DomainError, is_database_down
from foundation.parsers import check_storable
from foundation.push import push_to_user, user_group

logger = logging.getLogger(__name__)

# On the socket's own thread (config.ws_auth.ThreadPerSocket), like the rest of its database work.
_prepare = DatabaseSyncToAsync(chat.chat_prepare)
# What a person's other sockets are told when one of their browsers signs out (never relayed as is).
SIGNED_OUT_EVENT = "signed_out"


def _session_digest(session_key: str) -> str:
    return hashlib.sha256(session_key.encode()).hexdigest()


# On the socket's own thread, like the rest of its database work.
_credential_holds = DatabaseSyncToAsync(credential_holds)


def announce_sign_out(sender, request, user, **kwargs) -> None:
    """A browser signed out (Django's ``user_logged_out``, sent before its session is flushed): the
    sockets that browser opened close at once, wherever they are served. Others of the same person, on
    other browsers or by token, go on."""
    session_key = getattr(getattr(request, "session", None), "session_key", None)
    if user is not None and session_key:
        push_to_user(user.pk, SIGNED_OUT_EVENT, {"session": _session_digest(session_key)})


UNAUTHENTICATED = 4401
THROTTLED_CLOSE = 4429
MAX_FRAME_CHARS = 256 * 1024
# The first retry of the channel layer after it failed, and the longest wait between two retries.
LAYER_RETRY_FIRST_S, LAYER_RETRY_MAX_S = 1.0, 15.0
LAYER_ERRORS = (RedisError, OSError)
# Sent by a consumer to itself once the layer takes messages again: proof that the path works end to end.
LAYER_BACK = "layer.back"
# Tasks that outlive their socket (leaving the user's group): referenced until done.
_BACKGROUND: set[asyncio.Task] = set()


class ChatConsumer(AsyncWebsocketConsumer):
    task: asyncio.Task | None = None
    cancellation: Cancellation | None = None
    layer_down = False  # an outage of the layer has been reported to this client and has not ended
    layer_notice_due = False  # ...to be reported once the socket is accepted and no answer streams
    accepted = False
    closing = False  # told it is signed out and closed; nothing more is sent
    group: str | None = None  # the user's group, once joined
    _group_task: asyncio.Task | None = None
    _expiry_task: asyncio.Task | None = None
    session_key: str | None = None  # the browser session that signed this socket in (None: a token)
    credential: Credential | None = None  # what signed this socket in: checked before each turn

    async def connect(self) -> None:
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            if self.scope.get("auth_throttled"):
                return await self._refuse_throttled(self.scope["auth_throttled"])
            await self.close(code=UNAUTHENTICATED)
            return None
        if self.scope.get("auth_by") == "token":
            self.credential = self.scope.get("credential")
        else:
            self.session_key = getattr(self.scope.get("session"), "session_key", None)
            self.credential = credential_for_session(user=user, session_key=self.session_key)
        await self.accept()
        self.accepted = True
        # In the background: a Redis that hangs must not hold the socket up (nor be cut off midway,
        # which could leave a pooled connection out of step); chat works without the group.
        self._group_task = asyncio.create_task(self._join_user_group(user_group(user.id)))
        if self.layer_notice_due:
            await self._send_layer_notice()
        if self.credential is not None and self.credential.expires_at is not None:
            self._expiry_task = asyncio.create_task(self._close_at(self.credential.expires_at))

    async def _refuse_throttled(self, period_s: int) -> None:
        """Tells a client that sent too many wrong keys why its socket closes (a refused handshake could
        not say), with the most it has to wait, and closes it."""
        await self.accept()
        message = f"Too many wrong API keys from this address; try again within {period_s} seconds."
        await self.send(
            events.ws_frame(events.ERROR, events.error_data(message, code="throttled", retry_after=period_s))
        )
        await self.close(code=THROTTLED_CLOSE)

    async def _close_at(self, expires_at: datetime) -> None:
        """A token that expires ends its sockets when it does, not at their next turn."""
        await asyncio.sleep(max(0.0, (expires_at - timezone.now()).total_seconds()))
        if not await self._still_signed_in():
            await self._signed_out()

    async def _join_user_group(self, group: str) -> None:
        try:
            await self.channel_layer.group_add(group, self.channel_name)
        except (RedisError, OSError) as exc:  # only the pushes are missed; pages read again on reconnect
            logger.warning("websocket %s: could not join %s: %s", self.channel_name, group, exc)
        else:
            self.group = group

    async def _leave_user_group(self, group: str) -> None:
        with contextlib.suppress(RedisError, OSError):
            await self.channel_layer.group_discard(group, self.channel_name)

    async def user_event(self, message: dict) -> None:
        """A change of the user's data elsewhere, pushed by a service: relayed as it is; or the news
        that a browser of theirs signed out, which ends this socket if it was that browser's."""
        event = message["event"]
        if event.get("type") == SIGNED_OUT_EVENT:
            if self.session_key and event.get("session") == _session_digest(self.session_key):
                await self._signed_out()
            return
        if event.get("type") == CREDENTIALS_CHANGED_EVENT:
            # A token revoked, the person deactivated or their password changed: this socket's own
            # credential decides whether it goes on (another browser's sign-out does not end it).
            if not await self._still_signed_in():
                await self._signed_out()
            return
        await self.send(json.dumps(event, default=str))

    async def _signed_out(self) -> None:
        if self.closing:
            return
        self.closing = True
        if self.cancellation is not None:
            self.cancellation.cancel("disconnected")
        await self.send(events.ws_frame(events.ERROR, events.error_data(SIGNED_OUT_MESSAGE, code=SIGNED_OUT_CODE)))
        await self.close(code=UNAUTHENTICATED)

    async def _still_signed_in(self) -> bool:
        """Whether the token or browser session behind this socket still signs its user in: checked
        before each turn, so a socket outlives its credential by no turn, whatever Redis does."""
        return await _credential_holds(self.credential)

    async def disconnect(self, code: int) -> None:
        if self._expiry_task is not None:
            self._expiry_task.cancel()
        if self.group:
            # Left in the background too; a membership that outlives it expires with the group.
            leaving = asyncio.create_task(self._leave_user_group(self.group))
            _BACKGROUND.add(leaving)
            leaving.add_done_callback(_BACKGROUND.discard)
        if self.cancellation is not None:
            self.cancellation.cancel("disconnected")
        if self.task is not None and not self.task.done():
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task

    # Channels awaits ``self.channel_receive`` for the layer's messages, from the moment it sets it
    # (channels.consumer.AsyncConsumer.__call__, as pinned: Channels 4.3.2). It has no hook for a layer
    # that fails: the error ends the consumer and the client gets a bare 1011 close. Intercepting the
    # attribute keeps the socket open through the outage; tests/outage/test_websocket.py fails without it.
    @property
    def channel_receive(self):
        return self._receive_from_layer

    @channel_receive.setter
    def channel_receive(self, receive) -> None:
        self._layer_receive = receive

    async def _receive_from_layer(self) -> dict:
        """The layer's next message; an outage of the layer is reported and waited out, never raised."""
        retry_at_once = True
        while True:
            try:
                return await self._layer_receive()
            except LAYER_ERRORS as exc:
                if retry_at_once:
                    # A pooled connection that went stale when Redis restarted fails once; the next is
                    # fresh. An outage fails again at once (a refused connect), and is reported then.
                    retry_at_once = False
                    continue
                logger.warning("websocket %s: the channel layer is unavailable: %s", self.channel_name, exc)
            await self._report_layer_down()
            await self._wait_for_layer()
            retry_at_once = True

    async def _wait_for_layer(self) -> None:
        """Returns once the layer takes a message again, trying it after LAYER_RETRY_FIRST_S, then after
        waits that double up to LAYER_RETRY_MAX_S, for as long as the outage lasts."""
        await asyncio.sleep(LAYER_RETRY_FIRST_S)  # it has just failed twice; never a busy loop
        waits = wait_exponential(multiplier=LAYER_RETRY_FIRST_S, max=LAYER_RETRY_MAX_S)
        async for attempt in AsyncRetrying(wait=waits, retry=retry_if_exception_type(LAYER_ERRORS), reraise=True):
            with attempt:
                await self.channel_layer.send(self.channel_name, {"type": LAYER_BACK})

    async def layer_back(self, message: dict) -> None:
        self.layer_down = False

    async def _report_layer_down(self) -> None:
        if self.layer_down:
            return
        self.layer_down = True
        if not self.accepted or (self.task is not None and not self.task.done()):
            self.layer_notice_due = True
        else:
            await self._send_layer_notice()

    async def _send_layer_notice(self) -> None:
        self.layer_notice_due = False
        message = "The server cannot reach Redis; chat on this socket goes on, and it recovers by itself."
        await self.send(events.ws_frame(events.ERROR, events.error_data(message, code="unavailable")))

    async def _error(self, message: str, *, code: str, **details) -> None:
        # While an answer streams, a refused frame must not look like the end of that answer.
        kind = events.REJECTED if self.task is not None and not self.task.done() else events.ERROR
        await self.send(events.ws_frame(kind, events.error_data(message, code=code, **details)))

    async def receive(self, text_data: str | None = None, bytes_data: bytes | None = None) -> None:
        if text_data is None:
            return await self._error("Frames must be JSON text, not binary.", code="invalid_frame")
        if len(text_data) > MAX_FRAME_CHARS:
            return await self._error("The frame is too large.", code="too_large", max_chars=MAX_FRAME_CHARS)
        try:
            frame = json.loads(text_data)
        except (ValueError, RecursionError):  # RecursionError: "[[[[..." nested past the parser's limit
            return await self._error("The frame is not JSON.", code="invalid_frame")
        if not isinstance(frame, dict):
            return await self._error("A frame must be a JSON object with a type.", code="invalid_frame")
        try:
            check_storable(frame)
        except ParseError as exc:
            return await self._error(str(exc.detail), code="invalid_frame")
        kind = frame.get("type")
        if kind == "cancel":
            if self.cancellation is None or self.task is None or self.task.done():
                return await self._error("No answer is in flight.", code="nothing_to_cancel")
            self.cancellation.cancel("cancelled")
            return None
        if kind == "ping":
            return await self.send(events.ws_frame("pong", {}))
        if kind != "chat":
            return await self._error("Unknown frame type; send chat, cancel or ping.", code="invalid_frame")
        if self.task is not None and not self.task.done():
            return await self._error("An answer is already in flight; cancel it first.", code="busy")
        if not await self._still_signed_in():
            return await self._signed_out()
        serializer = ChatInSerializer(data={k: v for k, v in frame.items() if k != "type"})
        if not serializer.is_valid():
            return await self._error("Invalid chat frame.", code="invalid", fields=serializer.errors)
        request = chat.ChatRequest(**serializer.validated_data)
        try:
            target = await _prepare(owner=self.scope["user"], request=request)
        except DomainError as exc:
            return await self._error(exc.message, code=exc.code, **exc.details)
        except Exception as exc:
            if not is_database_down(exc):
                raise
            return await self._error(DATABASE_DOWN_MESSAGE, code="unavailable")
        self.cancellation = Cancellation()
        self.task = asyncio.create_task(self._answer(request, target, self.cancellation))
        return None

    async def _answer(self, request: chat.ChatRequest, target: chat.ChatTarget, cancellation: Cancellation) -> None:
        try:
            async for event in chat_events(
                owner=self.scope["user"], request=request, target=target, cancel=cancellation
            ):
                await self.send(events.ws_frame(event.type, event.data))
        except DomainError as exc:
            await self.send(events.ws_frame(events.ERROR, events.error_data(exc.message, code=exc.code)))
        except asyncio.CancelledError:
            raise
        except Exception:  # the socket stays usable for the next turn
            logger.exception("websocket chat failed")
            with contextlib.suppress(Exception):
                await self.send(events.ws_frame(events.ERROR, events.error_data("The answer failed.")))
        if self.layer_notice_due:
            with contextlib.suppress(Exception):
                await self._send_layer_notice()
