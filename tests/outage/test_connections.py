"""Impatient clients and bursts against a real Daphne on the test database.

Clients that give up while their request waits on the database (here: a table the test keeps locked),
with Daphne cancelling their application instances after a short --application-close-timeout, used to
leave the process's pooled connections checked out for good, and every later request answered 503.
Now PostgreSQL's own view of the process's sessions (pg_stat_activity, by application name) shows the
pool whole, and requests are answered at once. A burst of anonymous deep health checks, each of which
used to hold a pooled connection through a one-second worker inspection, leaves another user's requests
fast."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import httpx
import psycopg
import pytest
from rest_framework.authtoken.models import Token

from sessions_app.models import ChatSession
from tests.factories import UserFactory
from tests.helpers import ROOT, database_session, free_port, server_env, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

POOL_SIZE = 3
CLOSE_TIMEOUT_S = 1
IMPATIENT_CLIENTS = 4 * POOL_SIZE
# Each asks the workers afresh, about a second each, one after another: as many as fill the pool twice.
DEEP_CHECKS = 2 * POOL_SIZE + 2
# How long, past Daphne's close timeout, the cancelled statements may take to hand their connections back.
SETTLE_S = 10


def _start(log: Path, **env: str) -> tuple[str, subprocess.Popen]:
    port = free_port()
    argv = [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port)]
    argv += ["--application-close-timeout", str(CLOSE_TIMEOUT_S), "config.asgi:application"]
    with log.open("a") as output:
        process = subprocess.Popen(argv, cwd=ROOT, env=server_env(**env), stdout=output, stderr=subprocess.STDOUT)
    base = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        assert process.poll() is None, log.read_text()[-3000:]
        try:
            httpx.get(f"{base}/api/health", timeout=2)
            return base, process
        except httpx.HTTPError:
            assert time.monotonic() < deadline, "Daphne did not start"
            time.sleep(0.3)


@pytest.fixture
def site(tmp_path):
    """A Daphne with a small pool, its sessions named in pg_stat_activity; yields (base URL, name, log)."""
    name = f"recollect-test-{uuid.uuid4().hex[:8]}"
    log = tmp_path / "daphne.log"
    base, process = _start(log, DATABASE_POOL_SIZE=str(POOL_SIZE), DATABASE_APPLICATION_NAME=name)
    yield base, name, log
    process.terminate()
    process.wait(timeout=20)


def _sessions_of(admin: psycopg.Connection, name: str) -> list[tuple[str, str]]:
    """The site's sessions as PostgreSQL sees them: (state, last statement)."""
    return admin.execute(
        "SELECT state, query FROM pg_stat_activity WHERE application_name = %s ORDER BY state", [name]
    ).fetchall()


def _whole(held: list[tuple[str, str]]) -> bool:
    return len(held) <= POOL_SIZE and all(state == "idle" for state, _ in held)


def _wait_for_a_whole_pool(admin: psycopg.Connection, name: str) -> None:
    wait_until(
        lambda: _whole(_sessions_of(admin, name)),
        timeout=CLOSE_TIMEOUT_S + SETTLE_S,
        what=f"a pool of at most {POOL_SIZE} idle connections",
    )


def _timed_get(client: httpx.Client, url: str) -> tuple[int, float]:
    started = time.monotonic()
    status = client.get(url).status_code
    return status, time.monotonic() - started


def test_clients_that_give_up_on_a_waiting_request_leave_the_pool_whole(site):
    base, name, log = site
    user = UserFactory()
    ChatSession.objects.create(owner=user, title="kept")
    headers = {"Authorization": f"Token {Token.objects.create(user=user).key}"}
    gave_up = []

    def impatient() -> None:
        try:
            httpx.get(f"{base}/api/sessions", headers=headers, timeout=0.5)
        except httpx.TimeoutException:
            gave_up.append(1)

    with database_session() as admin, database_session() as locker:
        with locker.transaction():
            locker.execute(f"LOCK TABLE {ChatSession._meta.db_table} IN ACCESS EXCLUSIVE MODE")
            clients = [threading.Thread(target=impatient) for _ in range(IMPATIENT_CLIENTS)]
            for client in clients:
                client.start()
            for client in clients:
                client.join()
            assert len(gave_up) == IMPATIENT_CLIENTS, "every request waited on the lock"
            # Once Daphne has cancelled the abandoned instances (after CLOSE_TIMEOUT_S), their statements
            # are cancelled too: nothing waits on the lock, every connection is handed back.
            _wait_for_a_whole_pool(admin, name)
        _wait_for_a_whole_pool(admin, name)

    with httpx.Client(base_url=base, headers=headers, timeout=10) as client:
        timings = [_timed_get(client, "/api/sessions") for _ in range(2 * POOL_SIZE)]
        assert all(status == 200 for status, _ in timings), timings
        assert max(seconds for _, seconds in timings) < 1.0, timings
        health = client.get("/api/health").json()
    assert health["connections"] == {"ok": True}
    print(
        f"{IMPATIENT_CLIENTS} abandoned requests; then {len(timings)} answered in at most "
        f"{max(s for _, s in timings):.2f}s; log:\n{log.read_text()[-1500:]}"
    )


# The burst comes from a process of its own, as it would from other machines: threads in the test's own
# process, each setting up a client at once, would hold the interpreter and slow the timed requests
# themselves, whatever the server did.
BURST = """
import json, sys, threading, httpx
url, count = sys.argv[1], int(sys.argv[2])
answers = []
def check():
    try:
        answers.append(httpx.get(url, timeout=30).status_code)
    except httpx.HTTPError as exc:
        answers.append(type(exc).__name__)
threads = [threading.Thread(target=check) for _ in range(count)]
print("started", flush=True)
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
print(json.dumps(answers), flush=True)
"""


def test_a_burst_of_anonymous_deep_health_checks_leaves_other_users_fast(tmp_path):
    # A small pool, and no shared answer among the checks: were a check to hold a pooled connection while
    # it waits for the workers (its own asking or the one before it), the pool would be taken for seconds.
    base, process = _start(tmp_path / "daphne.log", DATABASE_POOL_SIZE=str(POOL_SIZE), HEALTH_DEEP_CACHE_S="0")
    user = UserFactory()
    headers = {"Authorization": f"Token {Token.objects.create(user=user).key}"}
    try:
        with httpx.Client(base_url=base, headers=headers, timeout=10) as client:
            assert client.get("/api/sessions").status_code == 200
            burst = subprocess.Popen(
                [sys.executable, "-c", BURST, f"{base}/api/health?deep=1", str(DEEP_CHECKS)],
                stdout=subprocess.PIPE,
                text=True,
            )
            assert burst.stdout.readline().strip() == "started"
            timings = []
            while burst.poll() is None or len(timings) < 5:
                timings.append(_timed_get(client, "/api/sessions"))
            answers = json.loads(burst.stdout.read())
    finally:
        process.terminate()
        process.wait(timeout=20)
    assert len(answers) == DEEP_CHECKS and set(answers) <= {200, 503, 429}, answers
    assert all(status == 200 for status, _ in timings), timings
    slowest = max(seconds for _, seconds in timings)
    print(f"{DEEP_CHECKS} deep checks; {len(timings)} requests of another user, the slowest {slowest:.2f}s")
    assert slowest < 1.0, timings
