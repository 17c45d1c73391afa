"""A request's thread never keeps the web server from exiting: when Daphne stops its event loop (SIGTERM)
while a request's sync code waits on that loop (a sync middleware calling the async rest of the chain),
the process still ends, instead of waiting for a thread that can never finish."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.helpers import ROOT, server_env

# A process that starts one request whose sync code waits on the event loop, then stops the loop and
# exits, as Daphne does on SIGTERM.
SERVER = textwrap.dedent(
    """
    import asyncio, sys, threading

    import django

    django.setup()
    from asgiref.sync import async_to_sync
    from django.http import HttpResponse
    from django.test.utils import override_settings
    from django.urls import path

    from config.handler import ConnectionSafeASGIHandler

    waiting = threading.Event()

    async def never():
        await asyncio.Event().wait()

    def view(request):
        waiting.set()
        async_to_sync(never)()
        return HttpResponse()

    urlpatterns = [path("api/waits", view)]
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
        "path": "/api/waits", "raw_path": b"/api/waits", "query_string": b"", "root_path": "",
        "headers": [(b"host", b"127.0.0.1")], "client": ("127.0.0.1", 1), "server": ("127.0.0.1", 80),
    }

    bodies = [{"type": "http.request", "body": b"", "more_body": False}]

    async def receive():
        if bodies:
            return bodies.pop()
        await asyncio.Event().wait()

    async def send(message):
        pass

    async def serve():
        asyncio.ensure_future(ConnectionSafeASGIHandler()(scope, receive, send))
        while not waiting.is_set():
            await asyncio.sleep(0.01)

    with override_settings(ROOT_URLCONF=__name__):
        asyncio.new_event_loop().run_until_complete(serve())
    print("stopping with a request still waiting on the loop", flush=True)
    sys.exit(0)
    """
)


def test_a_request_waiting_on_a_stopped_event_loop_does_not_keep_the_server_from_exiting():
    run = subprocess.run(
        [sys.executable, "-c", SERVER], cwd=ROOT, env=server_env(), capture_output=True, text=True, timeout=60
    )
    assert "stopping with a request still waiting" in run.stdout, run.stderr
    assert run.returncode == 0, run.stderr
