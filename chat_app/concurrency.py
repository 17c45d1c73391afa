"""How chat turns share a process: cancellation of an answer in flight, a bound on turns streaming
at once, a gate that keeps turns using the database below the connection pool's size, and answers
streaming that give way to turns being prepared."""

from __future__ import annotations

import asyncio
import collections
import contextlib
import threading
import time
from collections.abc import Iterator

from django.conf import settings

from foundation.db import release_database_connections


class Cancellation(threading.Event):
    """Set by a transport to stop an answer in flight; ``reason`` says why (recorded with the partial
    answer): "cancelled" by the user, or "disconnected" when the client went away."""

    reason = "cancelled"

    def cancel(self, reason: str = "cancelled") -> None:
        if not self.is_set():
            self.reason = reason
        self.set()
        _PREPARATIONS.wake()  # an answer pausing for others' turns learns of it at once


_SLOTS: dict[int, threading.BoundedSemaphore] = {}
_GATES: dict[int, DatabaseGate] = {}


class DatabaseGate:
    """A bounded number of turns using the database at once, where a turn recording its finished answer
    goes before the turns waiting to be prepared: its person is waiting for the end of their answer (the
    ``done`` event, the answer kept), and recording takes a few milliseconds, where preparing takes tens.
    Under steady load (``bench/load.py``) an answer's recording otherwise queued behind every turn that
    arrived while it streamed. Within each kind, turns go in the order they came: a place given back is
    handed to the turn that waited longest, since one left to whoever wakes first made a few turns wait a
    minute under steady load."""

    def __init__(self, size: int) -> None:
        self._free = size
        self._lock = threading.Lock()
        # Waiting turns, each woken when a place is handed to it: those recording, then those to prepare.
        self._recording: collections.deque[threading.Event] = collections.deque()
        self._preparing: collections.deque[threading.Event] = collections.deque()

    @property
    def waiting_first(self) -> int:
        """How many turns are waiting to record their answer."""
        return len(self._recording)

    @property
    def waiting(self) -> int:
        """How many turns are waiting, of either kind."""
        return len(self._recording) + len(self._preparing)

    @contextlib.contextmanager
    def entered(self, *, first: bool = False) -> Iterator[None]:
        with self._lock:
            # A place is free only while nobody waits (a place given back goes straight to a waiting turn).
            handed = None
            if self._free:
                self._free -= 1
            else:
                handed = threading.Event()
                (self._recording if first else self._preparing).append(handed)
        if handed is not None:
            handed.wait()
        try:
            yield
        finally:
            self._leave()

    def _leave(self) -> None:
        with self._lock:
            for waiting in (self._recording, self._preparing):
                if waiting:
                    waiting.popleft().set()
                    return
            self._free += 1


@contextlib.contextmanager
def database_turn(*, first: bool = False) -> Iterator[None]:
    """The gate below, entered without holding a connection (a thread waiting at the gate with one
    would starve the threads inside it) and left having handed its connections back. ``first``: ahead of
    the turns waiting to be prepared (an answer being recorded)."""
    release_database_connections()
    with _database_gate().entered(first=first):
        try:
            yield
        finally:
            release_database_connections()


def _database_gate() -> DatabaseGate:
    """Turns using the database at once (recording, searching, assembling): CHAT_TURNS_PREPARED_AT_ONCE,
    and below the connection pool's size, so that a burst of turns queues here instead of timing out on
    the pool. Preparing a turn is mostly Python, which runs on one core per process: a few at once keep
    that core busy while others wait for PostgreSQL; more only take turns at it, each switch costing
    processor (100 websocket turns at once on 2 cores, 2 web processes: first words p95 6.9-7.1 s with
    four, 7.4-7.5 with six, 8.0-8.3 with two). Streaming holds no connection and is not limited by it:
    an answer can take a minute, and a pool held by every open stream would refuse the next user."""
    pool = settings.DATABASES["default"].get("OPTIONS", {}).get("pool")
    pool_size = pool.get("max_size", 8) if isinstance(pool, dict) else 8
    size = max(1, min(settings.CHAT_TURNS_PREPARED_AT_ONCE, pool_size - 2))
    return _GATES.setdefault(size, DatabaseGate(size))


def turn_slots() -> threading.BoundedSemaphore:
    """Turns streaming at once in this process, each in its own thread: bounded, so that a flood of
    sockets gets a clear "busy" instead of exhausting threads and database connections."""
    size = settings.CHAT_MAX_CONCURRENT_TURNS
    return _SLOTS.setdefault(size, threading.BoundedSemaphore(size))


class Preparations:
    """Turns of this process being prepared (recorded, searched, assembled), to which the model's answers
    already streaming give way between two pieces. In a burst of turns, fifty answers streaming at once
    take most of a process (the model client builds objects for every piece) and the last turns to
    arrive waited for their first token behind everyone's answers; now each new turn is prepared first,
    its pieces waiting in the connection meanwhile, none lost. Each pause is short and an answer's
    pauses have a total (``chat_app.streaming``), so that it moves on however many turns keep arriving."""

    def __init__(self) -> None:
        self._preparing = 0
        self._changed = threading.Condition()
        # Answers streaming on an event loop, pausing: woken through their loop.
        self._waiting: set[tuple[asyncio.AbstractEventLoop, asyncio.Future]] = set()

    @property
    def count(self) -> int:
        return self._preparing

    @contextlib.contextmanager
    def preparing(self) -> Iterator[None]:
        with self._changed:
            self._preparing += 1
        try:
            yield
        finally:
            with self._changed:
                self._preparing -= 1
                if not self._preparing:
                    self._changed.notify_all()
                    self._wake_waiting()

    def give_way(self, *, pause_s: float, cancel: threading.Event) -> float:
        """Waits until no turn is being prepared, ``cancel`` is set, or ``pause_s`` has passed; the seconds
        waited."""
        if not self._preparing or pause_s <= 0 or cancel.is_set():
            return 0.0
        started = time.monotonic()
        with self._changed:
            self._changed.wait_for(lambda: not self._preparing or cancel.is_set(), timeout=pause_s)
        return time.monotonic() - started

    async def give_way_on_loop(self, *, pause_s: float, cancel: threading.Event) -> float:
        """``give_way`` for an answer streaming on an event loop: the same wait, without holding a thread.
        Woken (a turn ended, another answer was cancelled), it looks again at why it waits."""
        started = time.monotonic()
        loop = asyncio.get_running_loop()
        while self._preparing and not cancel.is_set():
            left = pause_s - (time.monotonic() - started)
            if left <= 0:
                break
            waiter = (loop, loop.create_future())
            with self._changed:
                if not self._preparing:
                    break
                self._waiting.add(waiter)
            try:
                await asyncio.wait({waiter[1]}, timeout=left)
            finally:
                with self._changed:
                    self._waiting.discard(waiter)
        return time.monotonic() - started

    def wake(self) -> None:
        """Wakes the answers pausing, to look again at why they wait (one was cancelled)."""
        with self._changed:
            self._changed.notify_all()
            self._wake_waiting()

    def _wake_waiting(self) -> None:
        for loop, waiter in self._waiting:
            with contextlib.suppress(RuntimeError):  # its loop has closed: nobody waits there any more
                loop.call_soon_threadsafe(_resolve, waiter)
        self._waiting.clear()


def _resolve(waiter: asyncio.Future) -> None:
    if not waiter.done():
        waiter.set_result(None)


_PREPARATIONS = Preparations()


def preparations() -> Preparations:
    """This process's turns in preparation, whatever their transport."""
    return _PREPARATIONS
