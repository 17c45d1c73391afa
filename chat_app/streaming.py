"""Streaming a chat turn to async transports (server-sent events, the websocket): the turn runs in a
thread of its own, since the ORM and litellm are synchronous, and its events are relayed as they come."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import AsyncIterator
from typing import Any

from django.conf import settings
from django.db import connections

from chat_app import events
from chat_app.concurrency import Cancellation, turn_slots
from chat_app.events import Event
from chat_app.exceptions import ServerBusy
from chat_app.services import ChatRequest, ChatTarget, chat_turn
from foundation.exceptions import DATABASE_DOWN_MESSAGE, DomainError, is_database_down

logger = logging.getLogger(__name__)


async def chat_events(*, owner, request: ChatRequest, target: ChatTarget, cancel: Cancellation) -> AsyncIterator[Event]:
    """``chat_turn`` for async transports: the turn runs in a thread of its own (the ORM and litellm are
    synchronous) and its events are relayed as they come. Leaving the loop early (a closed connection)
    cancels the answer, which is then recorded as partial."""
    slots = turn_slots()
    if not slots.acquire(blocking=False):
        raise ServerBusy(details={"max_turns": settings.CHAT_MAX_CONCURRENT_TURNS})
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue = asyncio.Queue()

    def put(item: Any) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody is listening any more
            loop.call_soon_threadsafe(queue.put_nowait, item)

    def run() -> None:
        try:
            for event in chat_turn(owner=owner, request=request, target=target, cancel=cancel):
                put(event)
        except DomainError as exc:
            put(exc)
        except Exception as exc:  # a bug or an outage must still end the stream with a readable error
            put(_failure_event(exc, session_id=request.session_id))
        finally:
            connections.close_all()
            slots.release()
            put(None)

    try:
        threading.Thread(target=run, name="chat-turn", daemon=True).start()
    except BaseException:
        slots.release()
        raise
    try:
        pending: Any = None
        while True:
            item = pending if pending is not None else await queue.get()
            pending = None
            if item is None:
                return
            if isinstance(item, DomainError):
                raise item
            if item.type == events.TOKEN:
                item, pending = _merged_tokens(item, queue)
            yield item
    finally:
        cancel.cancel("disconnected")


def _failure_event(exc: Exception, *, session_id: str | None) -> Event:
    """The error a turn that broke ends with: the database being down says so, anything else is logged."""
    if is_database_down(exc):
        logger.warning("chat turn without a database: %s", exc)
        return Event(events.ERROR, events.error_data(DATABASE_DOWN_MESSAGE, code="unavailable", session_id=session_id))
    logger.exception("chat turn failed")
    return Event(events.ERROR, {"error": f"The turn failed: {type(exc).__name__}.", "session_id": session_id})


def _merged_tokens(first: Event, queue: asyncio.Queue) -> tuple[Event, Any]:
    """``first`` with the tokens queued behind it, as one token; and the next item, if one was taken that is
    not a token (None when there is none)."""
    # Tokens that arrived while the last frame was being sent go out as one: under load the client gets
    # fewer, larger frames instead of a growing backlog.
    text = [first.data["token"]]
    pending: Any = None
    while not queue.empty():
        pending = queue.get_nowait()
        if not (isinstance(pending, Event) and pending.type == events.TOKEN):
            break
        text.append(pending.data["token"])
        pending = None
    return Event(events.TOKEN, {**first.data, "token": "".join(text)}), pending
