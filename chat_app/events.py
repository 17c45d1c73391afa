"""The chat events and their wire formats: one place for server-sent events and websocket frames.

Events, in order: ``context``, any number of ``token``, ``mood``, then ``done`` or ``error``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

CONTEXT, TOKEN, DONE, ERROR = "context", "token", "done", "error"
# How sure the answer is (confident, uncertain or apologetic), sent once just before done or error.
MOOD = "mood"
# A websocket frame refused while an answer streams (busy, malformed): that answer goes on.
REJECTED = "rejected"


@dataclass
class Event:
    """What a transport relays: ``type`` is context, token, mood, done or error; ``data`` its body."""

    type: str
    data: dict[str, Any]


def sse_frame(event_type: str, data: dict[str, Any]) -> bytes:
    return f"event: {event_type}\ndata: {json.dumps(data, default=str)}\n\n".encode()


def ws_frame(event_type: str, data: dict[str, Any]) -> str:
    return json.dumps({"type": event_type, **data}, default=str)


def error_data(message: str, *, code: str = "error", session_id: str | None = None, **details: Any) -> dict:
    return {"error": message, "code": code, "session_id": session_id, **({"details": details} if details else {})}
