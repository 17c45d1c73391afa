"""Telling a signed-in person's open pages that something of theirs changed (a document's status, a
commit's memories), through the channel layer: every websocket of a user joins the group
``user_group(user_id)``, and a service announces a change with ``push_to_user``.

A push is a courtesy, never part of the work: PostgreSQL holds the truth and a page that missed one
reads it again on reconnect. So a push waits about ``PUSH_TIMEOUT_S`` at most, never raises, and after
a failure this process stops trying for ``PUSH_BACKOFF_S`` rather than make every change wait on Redis.

Every push of a process is sent from one event loop, in a thread of its own (``_PushLoop``): the
channel layer keeps its Redis connections per event loop, so a push sent from a loop made for it alone
opened a connection, and closed it, every time; a short document's three status pushes cost its
indexing about 15 ms of processor.
"""

from __future__ import annotations

import asyncio
import logging
import os
import threading
import time
from concurrent.futures import Future
from typing import Any

from channels.layers import get_channel_layer
from channels_redis.core import RedisChannelLayer
from django.conf import settings
from django.db import transaction
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

PUSH_TIMEOUT_S = 1.0
# How long a push is waited for: past the connection's own timeouts, which end a push to a Redis that
# hangs cleanly (a push abandoned midway could leave its connection out of step with its replies).
PUSH_WAIT_S = 3 * PUSH_TIMEOUT_S
PUSH_BACKOFF_S = 10.0
# The handler a consumer runs for these messages: ``user_event``.
MESSAGE_TYPE = "user.event"

_down_until = 0.0


def user_group(user_id: int) -> str:
    return f"user-{user_id}"


_layer = None


def _push_layer():
    """A channel layer of its own, whose Redis connections give up after PUSH_TIMEOUT_S.

    Not the shared one: its sockets must wait forever (websockets block on it), and cancelling a Redis
    command midway, the other way to bound a wait, can leave a pooled connection out of step with its
    replies for whoever uses it next. A timeout of the connection itself closes it cleanly instead."""
    global _layer
    if _layer is None:
        config = settings.CHANNEL_LAYERS.get("default", {})
        if config.get("BACKEND") == "channels_redis.core.RedisChannelLayer":
            hosts = [
                {**(host if isinstance(host, dict) else {"address": host}), **_TIMEOUTS}
                for host in config["CONFIG"]["hosts"]
            ]
            _layer = RedisChannelLayer(**{**config["CONFIG"], "hosts": hosts})
        else:
            _layer = get_channel_layer()
    return _layer


_TIMEOUTS = {"socket_timeout": PUSH_TIMEOUT_S, "socket_connect_timeout": PUSH_TIMEOUT_S}


async def _send(group: str, message: dict[str, Any]) -> None:
    layer = _push_layer()
    if layer is not None:
        await layer.group_send(group, message)


class _PushLoop:
    """The event loop this process sends its pushes from, started on the first push (again in a process
    forked from one that had it: a worker's child does not inherit the thread)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None
        self._pid = 0

    def submit(self, coroutine) -> Future:
        return asyncio.run_coroutine_threadsafe(coroutine, self._running())

    def _running(self) -> asyncio.AbstractEventLoop:
        with self._lock:
            if self._loop is None or self._pid != os.getpid() or not self._thread.is_alive():
                self._loop = asyncio.new_event_loop()
                self._thread = threading.Thread(target=self._loop.run_forever, name="push-loop", daemon=True)
                self._thread.start()
                self._pid = os.getpid()
            return self._loop


_push_loop = _PushLoop()


def push_to_user(user_id: int, kind: str, data: dict[str, Any]) -> bool:
    """Sends ``{"type": kind, **data}`` to every open socket of the user, now; False if it could not."""
    global _down_until
    if time.monotonic() < _down_until:
        return False
    message = {"type": MESSAGE_TYPE, "event": {"type": kind, **data}}
    try:
        _push_loop.submit(_send(user_group(user_id), message)).result(timeout=PUSH_WAIT_S)
    except (RedisError, OSError, TimeoutError) as exc:  # Redis down or slow: pages catch up when they read
        _down_until = time.monotonic() + PUSH_BACKOFF_S
        logger.info("could not push %s to user %s: %s", kind, user_id, exc)
        return False
    except Exception:  # anything else is a bug to see, but never the caller's failure
        logger.exception("could not push %s to user %s", kind, user_id)
        return False
    return True


def push_on_commit(user_id: int, kind: str, data_of) -> None:
    """Pushes once the current transaction commits (at once outside one); ``data_of()`` is called
    then, so it reads what was committed."""
    transaction.on_commit(lambda: push_to_user(user_id, kind, data_of()))
