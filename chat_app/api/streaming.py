"""Server-sent events over HTTP: what standard SSE clients send and expect.

Browsers' EventSource and SSE libraries ask for ``Accept: text/event-stream``; the stream answers it,
as it answers ``*/*``, ``application/json`` or no Accept header. Errors found before the stream
starts (bad input, an unknown session) are answered as JSON, the API's error shape, whatever the
client accepted: a stream cannot carry a status code once it has begun.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable

from rest_framework.negotiation import DefaultContentNegotiation

EVENT_STREAM = "text/event-stream"
# Sent at once, so that clients and proxies see the stream open before the first event is ready.
OPENING_COMMENT = b": stream open\n\n"
KEEP_ALIVE_COMMENT = b": keep-alive\n\n"


class EventStreamNegotiation(DefaultContentNegotiation):
    """Accepts ``text/event-stream`` besides what the JSON renderer accepts."""

    def select_renderer(self, request, renderers, format_suffix=None):
        accepted = {part.split(";")[0].strip().lower() for part in request.META.get("HTTP_ACCEPT", "").split(",")}
        if EVENT_STREAM in accepted or "text/*" in accepted:
            renderer = renderers[0]
            return renderer, renderer.media_type
        return super().select_renderer(request, renderers, format_suffix)


async def _waited(frames: AsyncIterator[bytes], *, wait: Callable[[], float]) -> AsyncIterator[bytes | None]:
    """Each frame of ``frames`` as it comes, and ``None`` whenever ``wait()`` seconds pass without one; the
    frame being awaited is cancelled when the stream ends, however it ends."""
    iterator = frames.__aiter__()
    pending: asyncio.Future = asyncio.ensure_future(iterator.__anext__())
    try:
        while True:
            done, _ = await asyncio.wait({pending}, timeout=wait())
            if not done:
                yield None
                continue
            try:
                frame = pending.result()
            except StopAsyncIteration:
                return
            yield frame
            pending = asyncio.ensure_future(iterator.__anext__())
    finally:
        if not pending.done():
            pending.cancel()


async def with_keep_alive(frames: AsyncIterator[bytes], *, interval: float) -> AsyncIterator[bytes]:
    """``frames``, opened by a comment and with a keep-alive comment whenever ``interval`` seconds
    pass without one (while the context is searched or a model is slow to start), so that idle
    timeouts of clients and proxies never close a turn that is still being prepared."""
    yield OPENING_COMMENT
    async with contextlib.aclosing(_waited(frames, wait=lambda: interval)) as waited:
        async for frame in waited:
            yield KEEP_ALIVE_COMMENT if frame is None else frame


async def while_signed_in(
    frames: AsyncIterator[bytes],
    *,
    still_good: Callable[[], Awaitable[bool]],
    interval: float,
    ended: Callable[[], bytes],
) -> AsyncIterator[bytes]:
    """``frames`` for as long as the credential that opened the stream holds, asked every ``interval``
    seconds whether frames flow or not: once it has ended (a token revoked, the person deactivated, a
    new password), the stream sends ``ended()`` (which also stops the answer) and closes."""
    checked = time.monotonic()

    def until_next_check() -> float:
        return max(0.0, checked + interval - time.monotonic())

    async with contextlib.aclosing(_waited(frames, wait=until_next_check)) as waited:
        async for frame in waited:
            if time.monotonic() - checked >= interval:
                if not await still_good():
                    yield ended()
                    return
                checked = time.monotonic()
            if frame is not None:
                yield frame
