"""The chat websocket: thin; it validates frames and relays the turn pipeline's events.

The client sends ``{"type": "chat", ...the chat body}`` and receives ``context``, ``token``... then
``done`` or ``error`` frames; ``{"type": "cancel"}`` stops the answer in flight. One answer at a time
per socket: a frame refused while one streams gets a ``rejected`` frame, which does not end that
answer. Every frame goes to this socket alone, so one user never receives another's events.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from config.exceptions import DomainError
from retrieval_app import chat
from retrieval_app.api.serializers import ChatInSerializer
from retrieval_app.chat import events

logger = logging.getLogger(__name__)

UNAUTHENTICATED = 4401
MAX_FRAME_CHARS = 256 * 1024


class ChatConsumer(AsyncWebsocketConsumer):
    async def connect(self) -> None:
        self.task: asyncio.Task | None = None
        self.cancellation: chat.Cancellation | None = None
        user = self.scope.get("user")
        if user is None or not user.is_authenticated:
            await self.close(code=UNAUTHENTICATED)
            return
        await self.accept()

    async def disconnect(self, code: int) -> None:
        if self.cancellation is not None:
            self.cancellation.cancel("disconnected")
        if self.task is not None and not self.task.done():
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self.task

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
        serializer = ChatInSerializer(data={k: v for k, v in frame.items() if k != "type"})
        if not serializer.is_valid():
            return await self._error("Invalid chat frame.", code="invalid", fields=serializer.errors)
        request = chat.ChatRequest(**serializer.validated_data)
        try:
            target = await database_sync_to_async(chat.chat_prepare)(owner=self.scope["user"], request=request)
        except DomainError as exc:
            return await self._error(exc.message, code=exc.code, **exc.details)
        self.cancellation = chat.Cancellation()
        self.task = asyncio.create_task(self._answer(request, target, self.cancellation))
        return None

    async def _answer(
        self, request: chat.ChatRequest, target: chat.ChatTarget, cancellation: chat.Cancellation
    ) -> None:
        try:
            async for event in chat.chat_events(
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
