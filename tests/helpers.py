"""Helpers for tests that run the product's own processes."""

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import quote

from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parent.parent


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


def start_daphnes(count: int, **extra_env: str):
    """``count`` Daphne processes on free ports, on the test database and Redis, answering /api/health."""
    env = clean_env(
        DJANGO_SETTINGS_MODULE="config.settings.test",
        DATABASE_URL=database_url(),
        REDIS_URL=settings.REDIS_URL,
        **extra_env,
    )
    ports = [free_port() for _ in range(count)]
    processes = [
        subprocess.Popen(
            [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "config.asgi:application"],
            cwd=ROOT,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        for port in ports
    ]
    deadline = time.monotonic() + 60
    for port, process in zip(ports, processes, strict=True):
        while True:
            assert process.poll() is None, process.stderr.read()
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=2)
                break
            except OSError:
                assert time.monotonic() < deadline, "Daphne did not start"
                time.sleep(0.3)
    return ports, processes


def stop_processes(processes) -> None:
    for process in processes:
        process.terminate()
    for process in processes:
        process.wait(timeout=20)
