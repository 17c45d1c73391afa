"""Telling a signed-in person's open pages that something of theirs changed (a document's status, a
commit's memories), through the channel layer: every websocket of a user joins the group
``user_group(user_id)``, and a service announces a change with ``push_to_user``.

A push is a courtesy, never part of the work: PostgreSQL holds the truth and a page that missed one
reads it again on reconnect. So a push waits at most ``PUSH_TIMEOUT_S``, never raises, and after a
failure this process stops trying for ``PUSH_BACKOFF_S`` rather than make every change wait on Redis.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.db import transaction

logger = logging.getLogger(__name__)

PUSH_TIMEOUT_S = 1.0
PUSH_BACKOFF_S = 10.0
# The handler a consumer runs for these messages: ``user_event``.
MESSAGE_TYPE = "user.event"

_down_until = 0.0


def user_group(user_id: int) -> str:
    return f"user-{user_id}"


async def _send(group: str, message: dict[str, Any]) -> None:
    layer = get_channel_layer()
    if layer is not None:
        await asyncio.wait_for(layer.group_send(group, message), timeout=PUSH_TIMEOUT_S)


def push_to_user(user_id: int, kind: str, data: dict[str, Any]) -> bool:
    """Sends ``{"type": kind, **data}`` to every open socket of the user, now; False if it could not."""
    global _down_until
    if time.monotonic() < _down_until:
        return False
    try:
        async_to_sync(_send)(user_group(user_id), {"type": MESSAGE_TYPE, "event": {"type": kind, **data}})
    except Exception as exc:  # Redis down or slow: the page catches up when it reads again
        _down_until = time.monotonic() + PUSH_BACKOFF_S
        logger.info("could not push %s to user %s: %s", kind, user_id, exc)
        return False
    return True


def push_on_commit(user_id: int, kind: str, data_of) -> None:
    """Pushes once the current transaction commits (at once outside one); ``data_of()`` is called
    then, so it reads what was committed."""
    transaction.on_commit(lambda: push_to_user(user_id, kind, data_of()))
