"""Streaming a chat turn to async transports (server-sent events, the websocket, the OpenAI-compatible
door): what uses the database runs in threads, since the ORM is synchronous; a model's answer is read
on the event loop; the turn's events are relayed as they come."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import logging
import threading
from collections.abc import AsyncIterator
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from django.conf import settings

from chat_app import events
from chat_app.concurrency import Cancellation, preparations, turn_slots
from chat_app.events import Event
from chat_app.exceptions import ServerBusy
from chat_app.services import (
    ChatRequest,
    ChatTarget,
    OpenedTurn,
    chat_turn,
    chat_turn_abandon,
    chat_turn_close,
    chat_turn_open,
    chat_turn_token,
)
from foundation import ai
from foundation.accounting import calls_recorded_together
from foundation.connections import hand_back
from foundation.exceptions import DATABASE_DOWN_MESSAGE, DomainError, is_database_down

logger = logging.getLogger(__name__)


async def chat_events(
    *, owner, request: ChatRequest, target: ChatTarget, cancel: Cancellation, streamed: bool = True
) -> AsyncIterator[Event]:
    """``chat_turn`` for async transports, its events relayed as they come. Leaving the loop early (a
    closed connection) cancels the answer, which is then recorded as partial. A model's answer
    ``streamed`` to its client is read on the event loop (``_answered_on_the_loop``) and gives way,
    between two pieces, to the turns this process is preparing (see ``Preparations``), for
    CHAT_STREAM_GIVE_WAY_MS at a time and CHAT_STREAM_GIVE_WAY_TOTAL_MS in all, after which its pieces
    go out as they come. Any other turn (the built-in engine's, or one the client reads whole, which
    never waits since nobody sees its first piece) runs whole in a thread of its own."""
    slots = turn_slots()
    if not slots.acquire(blocking=False):
        raise ServerBusy(details={"max_turns": settings.CHAT_MAX_CONCURRENT_TURNS})
    slot = _Slot(slots)
    try:
        engine = ai.text_engine()
        if streamed and isinstance(engine, ai.StreamingEngine):
            answered = _answered_on_the_loop(
                owner=owner, request=request, target=target, cancel=cancel, engine=engine, slot=slot
            )
        else:
            answered = _answered_in_a_thread(owner=owner, request=request, target=target, cancel=cancel, slot=slot)
        async with contextlib.aclosing(answered):
            async for event in answered:
                yield event
    finally:
        cancel.cancel("disconnected")  # an answer still going (its client left) stops at its next piece
        if not slot.handed_off:
            slot.release()


class _Slot:
    """A turn's place among those a process serves at once (``turn_slots``): given back exactly once,
    when the turn's last work ends, which may be after its client has gone (the answer recorded as
    partial, a preparation finishing). Until then the turn still holds threads and the database."""

    def __init__(self, slots: threading.BoundedSemaphore) -> None:
        self._slots = slots
        self._lock = threading.Lock()
        self._held = True
        self.handed_off = False  # to work that outlives the transport's loop, which then gives it back

    def hand_off(self) -> None:
        self.handed_off = True

    def release(self, *args: Any) -> None:  # (a future, when called back when one is done)
        with self._lock:
            if not self._held:
                return
            self._held = False
        self._slots.release()


async def _answered_in_a_thread(
    *, owner, request: ChatRequest, target: ChatTarget, cancel: Cancellation, slot: _Slot
) -> AsyncIterator[Event]:
    """The whole turn in a thread of its own (the ORM is synchronous), its events relayed as they come."""
    relay = _Relay(asyncio.get_running_loop())

    def run() -> None:
        try:
            for event in chat_turn(owner=owner, request=request, target=target, cancel=cancel):
                relay.put(event)
        except DomainError as exc:
            relay.put(exc)
        except Exception as exc:  # a bug or an outage must still end the stream with a readable error
            relay.put(_failure_event(exc, session_id=request.session_id))
        finally:
            hand_back()
            slot.release()
            relay.put(None)

    slot.hand_off()
    try:
        threading.Thread(target=run, name="chat-turn", daemon=True).start()
    except BaseException:
        slot.release()
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
        cancel.cancel("disconnected")  # the thread stops at its next piece and records what was said


async def _answered_on_the_loop(
    *, owner, request: ChatRequest, target: ChatTarget, cancel: Cancellation, engine: ai.StreamingEngine, slot: _Slot
) -> AsyncIterator[Event]:
    """The turn prepared and its answer recorded in a thread (the ORM is synchronous), the model's answer
    read on the event loop in between: a hundred answers streaming at once then cost the process half
    what a hundred threads reading their own connections cost, and the turns being prepared get the
    time back. A client that goes away at any point leaves the turn ended (its answer, if any, recorded
    as partial) by a thread, since nothing here may wait any more; the turn's slot goes back after that."""
    opening = _in_a_thread(chat_turn_open, owner=owner, request=request, target=target, engine=engine)
    try:
        # Shielded: a client that goes away meanwhile leaves the preparation to finish.
        opened = await asyncio.shield(asyncio.wrap_future(opening))
    except DomainError:
        raise
    except Exception as exc:  # a bug or an outage must still end the stream with a readable error
        yield _failure_event(exc, session_id=request.session_id)
        return
    except asyncio.CancelledError:
        slot.hand_off()
        # Called back in whatever thread finishes the preparation, or at once here: always to a thread.
        opening.add_done_callback(lambda done: _TURN_THREADS.submit(_abandon_once_opened, done, slot))
        raise
    answer = opened.answer
    if answer is None:  # it could not be prepared: its ending is among its events
        for event in opened.events:
            yield event
        return
    call = ai.StreamedCall(
        engine=engine, purpose="chat", owner_id=opened.turn.session.owner_id, session_id=opened.turn.session.id
    )
    failure: Exception | None = None
    ended = False
    try:
        for event in opened.events:
            yield event
        async with contextlib.aclosing(_answer_tokens(opened, engine=engine, call=call, cancel=cancel)) as tokens:
            async for event in tokens:
                yield event
        ended = True
    except Exception as exc:  # the model failed: recorded, and said, as the turn's ending
        failure, ended = exc, True
    finally:
        if not ended:  # the client went away
            slot.hand_off()
            _TURN_THREADS.submit(_abandoned, opened, call, slot)
    # Shielded too: the answer is recorded even if its client goes away meanwhile.
    closing = _in_a_thread(_closed, opened=opened, call=call, failure=failure)
    slot.hand_off()
    closing.add_done_callback(slot.release)
    try:
        ending = await asyncio.shield(asyncio.wrap_future(closing))
    except Exception as exc:  # the answer could not be recorded (the database went away meanwhile)
        yield _failure_event(exc, session_id=opened.session_id)
        return
    for event in ending:
        yield event


async def _answer_tokens(
    opened: OpenedTurn, *, engine: ai.StreamingEngine, call: ai.StreamedCall, cancel: Cancellation
) -> AsyncIterator[Event]:
    """The model's answer as token events, giving way between two of them to the turns this process
    prepares; until the answer ends or is cancelled (its status then says why)."""
    answer = opened.answer
    if cancel.is_set():  # cancelled before the first word: the model is never called
        answer.status = cancel.reason
        return
    pause_s = settings.CHAT_STREAM_GIVE_WAY_MS / 1000
    # Under steady load some turn is nearly always being prepared: the total keeps an answer from
    # crawling at a piece a pause for its whole length.
    left_s = settings.CHAT_STREAM_GIVE_WAY_TOTAL_MS / 1000
    async with contextlib.aclosing(engine.astream(opened.turn.prompt.messages, call=call)) as pieces:
        async for piece in pieces:
            if cancel.is_set():
                answer.status = cancel.reason
                break
            yield chat_turn_token(answer, piece, session_id=opened.session_id)
            if left_s > 0:
                left_s -= await preparations().give_way_on_loop(pause_s=min(pause_s, left_s), cancel=cancel)


def _closed(*, opened: OpenedTurn, call: ai.StreamedCall, failure: Exception | None) -> list[Event]:
    ending = chat_turn_close(opened, error=failure)
    try:
        call.record()
    except Exception:  # the answer is stored: a lost record of the call must not say the turn failed
        logger.exception("chat: recording the model call failed")
    return ending


def _abandon_once_opened(opening: Future, slot: _Slot) -> None:
    try:
        if not opening.cancelled() and opening.exception() is None and opening.result().answer is not None:
            _abandoned(opening.result(), None, None)
    finally:
        slot.release()


def _abandoned(opened: OpenedTurn, call: ai.StreamedCall | None, slot: _Slot | None) -> None:
    try:
        with calls_recorded_together():
            if call is not None:
                call.record()
            chat_turn_abandon(opened)
    except Exception:  # nobody is left to tell: the question itself was recorded before the answer
        logger.exception("chat: recording an abandoned answer failed")
    finally:
        hand_back()
        if slot is not None:
            slot.release()


# The threads turns are prepared and recorded in, as many as turns may stream at once: waiting turns
# queue at the database gate (``database_turn``), not here.
_TURN_THREADS = ThreadPoolExecutor(max_workers=settings.CHAT_MAX_CONCURRENT_TURNS, thread_name_prefix="chat-turn")


def _in_a_thread(function, /, **kwargs) -> Future:
    """``function(**kwargs)`` in one of the turns' threads, its database connections handed back after."""

    def run():
        try:
            return function(**kwargs)
        finally:
            hand_back()

    return _TURN_THREADS.submit(run)


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
