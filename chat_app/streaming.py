"""Streaming a chat turn to async transports (server-sent events, the websocket): the turn runs in a
thread of its own, since the ORM and litellm are synchronous, and its events are relayed as they come."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import threading
from collections.abc import AsyncIterator
from typing import Any

from django.conf import settings
from django.db import connections

from chat_app import events
from chat_app.concurrency import Cancellation, preparations, turn_slots
from chat_app.events import Event
from chat_app.exceptions import ServerBusy
from chat_app.services import ChatRequest, ChatTarget, chat_turn
from foundation import ai
from foundation.exceptions import DATABASE_DOWN_MESSAGE, DomainError, is_database_down

logger = logging.getLogger(__name__)


async def chat_events(
    *, owner, request: ChatRequest, target: ChatTarget, cancel: Cancellation, streamed: bool = True
) -> AsyncIterator[Event]:
    """``chat_turn`` for async transports: the turn runs in a thread of its own (the ORM and litellm are
    synchronous) and its events are relayed as they come. Leaving the loop early (a closed connection)
    cancels the answer, which is then recorded as partial. A model's answer ``streamed`` to its client
    gives way, between two pieces, to the turns this process is preparing (see ``Preparations``), for
    CHAT_STREAM_GIVE_WAY_MS at a time and CHAT_STREAM_GIVE_WAY_TOTAL_MS in all, after which its pieces
    go out as they come; one the client reads whole (``streamed=False``) never waits, since nobody sees
    its first piece."""
    slots = turn_slots()
    if not slots.acquire(blocking=False):
        raise ServerBusy(details={"max_turns": settings.CHAT_MAX_CONCURRENT_TURNS})
    relay = _Relay(asyncio.get_running_loop())
    pause_s = settings.CHAT_STREAM_GIVE_WAY_MS / 1000
    # Under steady load some turn is nearly always being prepared: the total keeps an answer from
    # crawling at a piece a pause for its whole length.
    left_s = settings.CHAT_STREAM_GIVE_WAY_TOTAL_MS / 1000 if streamed and ai.text_engine().generates else 0.0

    def run() -> None:
        nonlocal left_s
        try:
            for event in chat_turn(owner=owner, request=request, target=target, cancel=cancel):
                relay.put(event)
                if left_s > 0 and event.type == events.TOKEN:
                    left_s -= preparations().give_way(pause_s=min(pause_s, left_s), cancel=cancel)
        except DomainError as exc:
            relay.put(exc)
        except Exception as exc:  # a bug or an outage must still end the stream with a readable error
            relay.put(_failure_event(exc, session_id=request.session_id))
        finally:
            connections.close_all()
            slots.release()
            relay.put(None)

    try:
        threading.Thread(target=run, name="chat-turn", daemon=True).start()
    except BaseException:
        slots.release()
        raise
    try:
        while True:
            for item in _merged_tokens(await relay.take()):
                if item is None:
                    return
                if isinstance(item, DomainError):
                    raise item
                yield item
    finally:
        cancel.cancel("disconnected")


class _Relay:
    """Events from a turn's thread to the event loop. The loop is woken only when it is not already due to
    look: in a burst, a wake-up per streamed token (a write to the loop's pipe, a pass through the loop)
    cost the web process as much as the tokens themselves."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.items: collections.deque = collections.deque()
        self.lock = threading.Lock()
        self.woken = False
        self.ready = asyncio.Event()

    def put(self, item: Any) -> None:
        with self.lock:
            self.items.append(item)
            if self.woken:
                return
            self.woken = True
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody is listening any more
            self.loop.call_soon_threadsafe(self.ready.set)

    async def take(self) -> list[Any]:
        """Everything put since the last take, waiting for at least one item."""
        await self.ready.wait()
        with self.lock:
            self.ready.clear()
            self.woken = False
            items = list(self.items)
            self.items.clear()
        return items


def _failure_event(exc: Exception, *, session_id: str | None) -> Event:
    """The error a turn that broke ends with: the database being down says so, anything else is logged."""
    if is_database_down(exc):
        logger.warning("chat turn without a database: %s", exc)
        return Event(events.ERROR, events.error_data(DATABASE_DOWN_MESSAGE, code="unavailable", session_id=session_id))
    logger.exception("chat turn failed")
    return Event(events.ERROR, {"error": f"The turn failed: {type(exc).__name__}.", "session_id": session_id})


def _merged_tokens(items: list[Any]) -> list[Any]:
    """``items`` with each run of tokens as one token: tokens that arrived while the last frame was being
    sent go out together, so that under load the client gets fewer, larger frames instead of a backlog."""
    merged: list[Any] = []
    run: list[Event] = []
    for item in [*items, None]:
        if _is_token(item):
            run.append(item)
            continue
        if run:
            merged.append(Event(events.TOKEN, {**run[0].data, "token": "".join(t.data["token"] for t in run)}))
            run = []
        merged.append(item)
    return merged[:-1]  # without the end marker added above


def _is_token(item: Any) -> bool:
    return isinstance(item, Event) and item.type == events.TOKEN
