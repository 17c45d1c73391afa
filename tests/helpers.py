"""Helpers for tests that run the product's own processes."""

import asyncio
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
import tomllib
import urllib.request
import uuid
from pathlib import Path
from urllib.parse import quote

import psycopg
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parent.parent


def application_packages() -> tuple[str, ...]:
    """The product's top-level packages, highest first, as the import contracts name them."""
    with (ROOT / "pyproject.toml").open("rb") as project:
        return tuple(tomllib.load(project)["tool"]["importlinter"]["root_packages"])


POLL_EVERY_S = 0.1


def wait_until(condition, *, timeout: float, what: str, every: float = POLL_EVERY_S):
    """Asks ``condition`` until it gives something true, which is returned; fails saying ``what`` did not
    happen once ``timeout`` seconds have passed. A test waits on the event itself, never a fixed pause:
    as short as the machine allows when it is quick, as long as the deadline when it is busy."""
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        assert time.monotonic() < deadline, f"{what} did not happen within {timeout}s"
        time.sleep(every)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def clean_env(**overrides: str) -> dict[str, str]:
    """The environment a user's shell would have: none of the test run's own Django settings."""
    env = {k: v for k, v in os.environ.items() if k not in ("DJANGO_SETTINGS_MODULE", "DATABASE_URL", "REDIS_URL")}
    env.update(overrides)
    return env


def manage(*args: str, env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout
    )


def database_url() -> str:
    params = connection.settings_dict
    host = quote(params["HOST"] or "", safe="")
    password = f":{quote(params['PASSWORD'])}" if params.get("PASSWORD") else ""
    port = f":{params['PORT']}" if params.get("PORT") else ""
    return f"postgresql://{params['USER']}{password}@{host}{port}/{params['NAME']}"


def database_session(dbname: str | None = None) -> psycopg.Connection:
    """A session of its own on the test server (the test database unless ``dbname``), outside the pool
    and in autocommit: to see, lock or end the site's sessions as an operator would."""
    params = connection.settings_dict
    return psycopg.connect(
        host=params["HOST"],
        port=params["PORT"] or None,
        user=params["USER"],
        password=params["PASSWORD"] or None,
        dbname=dbname or params["NAME"],
        autocommit=True,
    )


def server_env(**extra_env: str) -> dict[str, str]:
    """The environment of a server process on the test database and the test Redis (``extra_env`` may
    override any of it, the settings module included)."""
    base = {
        "DJANGO_SETTINGS_MODULE": "config.settings.test",
        "DATABASE_URL": database_url(),
        "REDIS_URL": settings.REDIS_URL,
    }
    return clean_env(**{**base, **extra_env})


def start_daphne(*, env: dict[str, str], log: Path) -> tuple[str, subprocess.Popen]:
    """One Daphne on a free port, its output appended to ``log`` (a pipe nobody reads would fill up and
    stall it); returns its base URL once /api/health answers."""
    port = free_port()
    with open(log, "a") as output:
        process = subprocess.Popen(
            [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "config.asgi:application"],
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        assert process.poll() is None, Path(log).read_text()[-3000:]
        try:
            urllib.request.urlopen(f"{base}/api/health", timeout=2)
            return base, process
        except OSError:
            assert time.monotonic() < deadline, "Daphne did not start"
            time.sleep(0.3)


def start_daphnes(count: int, **extra_env: str):
    """``count`` Daphne processes on the test database and Redis; returns their ports and processes."""
    env = server_env(**extra_env)
    logs = Path(tempfile.mkdtemp(prefix="recollect-daphne-"))
    started = [start_daphne(env=env, log=logs / f"daphne-{index}.log") for index in range(count)]
    return [int(base.rsplit(":", 1)[1]) for base, _ in started], [process for _, process in started]


def stop_processes(processes) -> None:
    for process in processes:
        process.terminate()
    for process in processes:
        process.wait(timeout=20)


def upload_markdown(base: str, token: str, name: str, text: str, *, timeout: float = 30) -> str:
    """Uploads a Markdown file through the API of a running server; the new document's id (202)."""
    boundary = uuid.uuid4().hex
    body = (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n'
        f"Content-Type: text/markdown\r\n\r\n{text}\r\n--{boundary}--\r\n"
    ).encode()
    request = urllib.request.Request(
        f"{base}/api/documents/upload",
        data=body,
        headers={"Authorization": f"Token {token}", "Content-Type": f"multipart/form-data; boundary={boundary}"},
    )
    with urllib.request.urlopen(request, timeout=timeout) as response:
        assert response.status == 202
        return json.loads(response.read())["doc_id"]


def pushed_events(channel: str, *, quiet_s: float = 0.5) -> list[dict]:
    """The events pushed to ``channel`` (a page's place in its user's group), in the order they came,
    once none has come for ``quiet_s``."""
    layer = get_channel_layer()

    async def drain() -> list[dict]:
        events = []
        while True:
            try:
                message = await asyncio.wait_for(layer.receive(channel), timeout=quiet_s)
            except TimeoutError:
                return events
            events.append(message["event"])

    return async_to_sync(drain)()
