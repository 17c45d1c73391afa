"""Django's ASGI handler, with each request's database connections handed back whatever ends it.

A request's sync code runs on a thread of its own (an executor this handler owns, given to asgiref's
ThreadSensitiveContext, so middleware, view and response all share it). When the request ends, however
it ends (a response, an exception, the client leaving, or Daphne cancelling the application instance),
the handler queues one more job on that thread: handing its connections back to the pool. A thread
cannot be stopped from outside, so the job runs once the view returns; meanwhile the view's statement is
cancelled and its next query refused (``foundation.connections.guard_query``), so that comes soon.
"""

from __future__ import annotations

import asyncio
import queue
import threading
from collections.abc import Callable
from concurrent.futures import Executor, Future

from asgiref.sync import ThreadSensitiveContext
from django.core.handlers.asgi import ASGIHandler

from foundation.connections import RequestState, cancel_statements, current_request, hand_back, held_by


class RequestThread(Executor):
    """One thread that runs a request's sync code, a call at a time, in order (what asgiref's
    ThreadSensitiveContext asks of its executor).

    Unlike ``ThreadPoolExecutor``'s, the thread is a daemon: the interpreter joins a pool's threads when it
    exits, so a request whose thread still waits on the event loop (a sync middleware calling the async
    rest of the chain) when Daphne stops that loop would keep the server from ever exiting on SIGTERM."""

    def __init__(self, *, initializer: Callable[[], None], name: str) -> None:
        self._work: queue.SimpleQueue = queue.SimpleQueue()
        self._closed = False
        self._thread = threading.Thread(target=self._run, args=(initializer,), name=name, daemon=True)
        self._thread.start()

    def submit(self, fn, /, *args, **kwargs) -> Future:
        if self._closed:
            raise RuntimeError("cannot schedule new futures after shutdown")
        future: Future = Future()
        self._work.put((future, fn, args, kwargs))
        return future

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self._closed = True
        self._work.put(None)  # after whatever was submitted before, such as handing connections back
        if wait:
            self._thread.join()

    def _run(self, initializer: Callable[[], None]) -> None:
        initializer()
        while (item := self._work.get()) is not None:
            future, fn, args, kwargs = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = fn(*args, **kwargs)
            except BaseException as exc:  # handed to whoever awaits the call, as a pool would
                future.set_exception(exc)
            else:
                future.set_result(result)


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
        executor = RequestThread(initializer=state.bind_thread, name="request")
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
