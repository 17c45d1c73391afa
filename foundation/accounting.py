"""Every model call, embedding or generation, is recorded with its tokens, cost, latency and error, and
with the conversation it served when it served one, so that a conversation's cost can be told."""

from __future__ import annotations

import contextlib
import contextvars
import time
from collections.abc import Iterator

from foundation.models import ModelCall

# The conversation whose work is being done in this thread or task, if any (``calls_for_session``).
_session: contextvars.ContextVar[object | None] = contextvars.ContextVar("recollect_call_session", default=None)
# The calls of the block being recorded together, if any (``calls_recorded_together``).
_together: contextvars.ContextVar[list[ModelCall] | None] = contextvars.ContextVar("recollect_calls", default=None)


@contextlib.contextmanager
def calls_for_session(session_id) -> Iterator[None]:
    """Model calls recorded inside this block are the given conversation's. Entered around plain
    function calls (never across a generator's yields, whose consumer would inherit it)."""
    token = _session.set(session_id)
    try:
        yield
    finally:
        _session.reset(token)


@contextlib.contextmanager
def calls_recorded_together() -> Iterator[None]:
    """Model calls recorded inside this block are stored together as it ends (whether it ends well or
    not): a chat turn makes two or three before its first word, each otherwise a write of its own on
    the way to that word. Entered around plain function calls, like ``calls_for_session``; a block
    inside another one adds its calls to the outer block's."""
    if _together.get() is not None:
        yield
        return
    calls: list[ModelCall] = []
    token = _together.set(calls)
    try:
        yield
    finally:
        _together.reset(token)
        if calls:
            ModelCall.objects.bulk_create(calls)


def record_call(
    *,
    kind: str,
    purpose: str,
    backend: str,
    model: str,
    started: float,
    owner_id: int | None = None,
    session_id=None,
    input_count: int = 1,
    input_tokens: int = 0,
    output_tokens: int = 0,
    cost_usd: float = 0.0,
    error: str = "",
) -> ModelCall:
    """Stores one call; ``started`` is its ``time.perf_counter()`` at the start. ``session_id`` defaults
    to the conversation of the enclosing ``calls_for_session``. Inside ``calls_recorded_together`` the
    call is stored when that block ends."""
    call = ModelCall(
        kind=kind,
        purpose=purpose,
        backend=backend,
        model=model,
        owner_id=owner_id,
        session_id=session_id if session_id is not None else _session.get(),
        input_count=input_count,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cost_usd=round(cost_usd, 6),
        latency_ms=round((time.perf_counter() - started) * 1000, 2),
        ok=not error,
        error=error[:2000],
    )
    together = _together.get()
    if together is None:
        call.save()
    else:
        together.append(call)
    return call


def model_calls_forget_session(*, session_id) -> None:
    """The conversation is gone: its calls stay (they were made and paid for) without pointing at it."""
    ModelCall.objects.filter(session_id=session_id).update(session_id=None)
