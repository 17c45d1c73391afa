"""How chat turns share a process: cancellation of an answer in flight, a bound on turns streaming
at once, and a gate that keeps turns using the database below the connection pool's size."""

from __future__ import annotations

import contextlib
import threading
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


_SLOTS: dict[int, threading.BoundedSemaphore] = {}
_GATES: dict[int, threading.BoundedSemaphore] = {}


@contextlib.contextmanager
def database_turn() -> Iterator[None]:
    """The gate below, entered without holding a connection (a thread waiting at the gate with one
    would starve the threads inside it) and left having handed its connections back."""
    release_database_connections()
    with _database_gate():
        try:
            yield
        finally:
            release_database_connections()


def _database_gate() -> threading.BoundedSemaphore:
    """Turns using the database at once (recording, searching, assembling) stay below the connection
    pool's size, so a burst of turns queues here instead of timing out on the pool. Streaming holds
    no connection and is not limited by it: an answer can take a minute, and a pool held by every
    open stream would refuse the next user."""
    pool = settings.DATABASES["default"].get("OPTIONS", {}).get("pool")
    size = max(1, (pool.get("max_size", 8) if isinstance(pool, dict) else 8) - 2)
    return _GATES.setdefault(size, threading.BoundedSemaphore(size))


def turn_slots() -> threading.BoundedSemaphore:
    """Turns streaming at once in this process, each in its own thread: bounded, so that a flood of
    sockets gets a clear "busy" instead of exhausting threads and database connections."""
    size = settings.CHAT_MAX_CONCURRENT_TURNS
    return _SLOTS.setdefault(size, threading.BoundedSemaphore(size))
