"""Telling a signed-in person's open pages that something of theirs changed (a document's status, a
commit's memories), through the channel layer: every websocket of a user joins the group
``user_group(user_id)``, and a service announces a change with ``push_to_user``.

A push is a courtesy, never part of the work: PostgreSQL holds the truth and a page that missed one
reads it again on reconnect. So a push waits about ``PUSH_TIMEOUT_S`` at most, never raises, and after
a failure this process stops trying for ``PUSH_BACKOFF_S`` rather than make every change wait on Redis.
"""

from __future__ import annotations

import logging
import time
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from channels_redis.core import RedisChannelLayer
from django.conf import settings
from django.db import transaction
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

PUSH_TIMEOUT_S = 1.0
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


def push_to_user(user_id: int, kind: str, data: dict[str, Any]) -> bool:
    """Sends ``{"type": kind, **data}`` to every open socket of the user, now; False if it could not."""
    global _down_until
    if time.monotonic() < _down_until:
        return False
    try:
        async_to_sync(_send)(user_group(user_id), {"type": MESSAGE_TYPE, "event": {"type": kind, **data}})
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
