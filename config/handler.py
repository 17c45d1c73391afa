"""Django's ASGI handler, with each request's database connections handed back whatever ends it.

A request's sync code runs on a thread of its own (an executor this handler owns, given to asgiref's
ThreadSensitiveContext, so middleware, view and response all share it). When the request ends, however
it ends (a response, an exception, the client leaving, or Daphne cancelling the application instance),
the handler queues one more job on that thread: handing its connections back to the pool. A thread
cannot be stopped from outside, so the job runs once the view returns; meanwhile the view's statement is
cancelled and its next query refused (``config.connections.guard_query``), so that comes soon.
"""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from asgiref.sync import ThreadSensitiveContext
from django.core.handlers.asgi import ASGIHandler

from config.connections import RequestState, cancel_statements, current_request, hand_back, held_by


def _stop_statements(state: RequestState) -> None:
    """The request's thread may be waiting on a lock or a slow statement: that is cancelled now (off the
    event loop), not left to run to its end. A request that finished holds nothing, and costs nothing."""
    held = held_by(state.thread_id)
    if held:
        asyncio.get_running_loop().run_in_executor(None, cancel_statements, held)


class ConnectionSafeASGIHandler(ASGIHandler):
    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await super().__call__(scope, receive, send)  # Django refuses it
        state = RequestState()
        executor = ThreadPoolExecutor(max_workers=1, initializer=state.bind_thread, thread_name_prefix="request")
        token = current_request.set(state)
        try:
            async with ThreadSensitiveContext(executor=executor):
                await self.handle(scope, self._watch_receive(receive, state), self._watch_send(send, state))
        finally:
            state.ended = True
            current_request.reset(token)
            _stop_statements(state)
            if state.thread_id is not None:
                executor.submit(hand_back)
            executor.shutdown(wait=False)

    @staticmethod
    def _watch_receive(receive, state: RequestState):
        async def watched():
            message = await receive()
            if message["type"] == "http.disconnect" and not state.response_started:
                state.client_gone = True
                _stop_statements(state)
            return message

        return watched

    @staticmethod
    def _watch_send(send, state: RequestState):
        async def watched(message):
            if message["type"] == "http.response.start":
                state.response_started = True
            await send(message)

        return watched
