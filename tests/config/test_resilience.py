"""The run command keeps the site up when its parts are killed: a worker killed mid-document, a Celery
main process or Daphne killed outright, the embedded Redis killed. Each test has a supervisor of its own
(on one data directory, in turn), with short indexing claims so that a dead run is noticed in seconds
rather than a minute."""

import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path

import psutil
import pytest

from tests.helpers import ROOT, clean_env, free_port, manage, upload_markdown, wait_until

pytestmark = pytest.mark.slow

HEARTBEAT_S, STALE_S, RESCUE_S = 1.0, 4.0, 2.0
# A Daphne that answers nothing for this long is restarted (see the last test).
HEALTH_RESTART_AFTER_S = 8.0


@dataclass
class Stack:
    proc: subprocess.Popen
    base: str
    var: Path
    log: Path
    env: dict[str, str]
    token: str = ""

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def call(self, path: str, body: dict | None = None, timeout: float = 10) -> tuple[int, dict]:
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = f"Token {self.token}"
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(f"{self.base}{path}", data=data, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                return response.status, json.loads(response.read() or b"{}")
        except urllib.error.HTTPError as error:
            try:
                return error.code, json.loads(error.read() or b"{}")
            except ValueError:  # a server error page while a server restarts
                return error.code, {}

    def upload(self, name: str, text: str) -> str:
        return upload_markdown(self.base, self.token, name, text, timeout=10)

    def children(self) -> dict[str, psutil.Process]:
        """The supervisor's direct children by role: "interactive", "bulk", "daphne-1" and "daphne-2"."""
        found = {}
        for child in psutil.Process(self.proc.pid).children():
            cmdline = " ".join(child.cmdline())
            for role in ("interactive", "bulk"):
                if f"--queues {role}" in cmdline:
                    found[role] = child
            if web := re.search(r"/web-\d+-(\d+)\.sock", cmdline):
                found[f"daphne-{web.group(1)}"] = child
        return found

    def healthy(self) -> bool:
        """Daphne answers, and (as staff see it) both workers answer a ping through Redis."""
        try:
            status, health = self.call("/api/health?deep=1", timeout=5)
        except OSError:
            return False
        names = " ".join(health.get("workers", {}).get("names", []))
        return status == 200 and (not self.token or ("interactive-" in names and "bulk-" in names))


def _wait(condition, *, timeout: float, what: str, stack: Stack, every: float = 0.2):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert stack.proc.poll() is None, f"the run command exited:\n{stack.output()[-4000:]}"
        value = condition()
        if value:
            return value
        time.sleep(every)
    raise AssertionError(f"{what} did not happen in {timeout}s:\n{stack.output()[-4000:]}")


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory) -> dict:
    """The data directory the stacks of this module start on, in turn (made by the first start), and the
    admin's token, which lives in its database."""
    return {"var": tmp_path_factory.mktemp("resilience") / "var", "token": ""}


@pytest.fixture
def stack(data_dir, tmp_path):
    """A supervisor of its own for each test, with its own PostgreSQL, Redis, workers and Daphne: what one
    test kills, freezes or counts in the log cannot reach the next, whatever their order. Only the data
    directory is shared (a first start makes it, which takes far longer than a start that reuses it)."""
    var = data_dir["var"]
    log = tmp_path / "stack.log"
    port = free_port()
    env = clean_env(
        RECOLLECT_VAR_DIR=str(var),
        DJANGO_SETTINGS_MODULE="config.settings.dev",
        DOCUMENT_INDEX_HEARTBEAT_S=str(HEARTBEAT_S),
        DOCUMENT_INDEX_STALE_S=str(STALE_S),
        DOCUMENT_RESCUE_INTERVAL_S=str(RESCUE_S),
        HEALTH_RESTART_AFTER_S=str(HEALTH_RESTART_AFTER_S),
    )
    with log.open("w") as output:
        proc = subprocess.Popen(
            [sys.executable, "-m", "config.stack", "--port", str(port), "--concurrency", "1", "--web-processes", "2"],
            cwd=ROOT,
            env=env,
            stdout=output,
            stderr=subprocess.STDOUT,
        )
    running = Stack(proc=proc, base=f"http://127.0.0.1:{port}", var=var, log=log, env=env)
    try:
        _wait(running.healthy, timeout=120, what="the start", stack=running, every=0.5)
        if not data_dir["token"]:
            password = (var / "initial-admin-password").read_text().strip()
            answer = running.call("/api/auth/token", {"username": "admin", "password": password})[1]
            data_dir["token"] = answer["token"]
        running.token = data_dir["token"]
        _wait(running.healthy, timeout=60, what="both workers to answer", stack=running, every=0.5)
        yield running
    finally:
        _stop(running)
    if os.environ.get("RECOLLECT_KEEP_STACK_LOG"):
        log.replace(os.environ["RECOLLECT_KEEP_STACK_LOG"])


def _stop(stack: Stack) -> None:
    """Stops the stack as Ctrl-C does, and proves that nothing of it is left for the next test."""
    descendants = psutil.Process(stack.proc.pid).children(recursive=True)
    stack.proc.send_signal(signal.SIGINT)
    stack.proc.wait(timeout=60)
    _gone, alive = psutil.wait_procs(descendants, timeout=10)
    assert not alive, f"left running: {[p.name() for p in alive]}"
    assert "stopped." in stack.output()
    wait_until(lambda: not _embedded_servers_alive(stack.var), timeout=30, what="the embedded servers to stop")


def _embedded_servers_alive(var: Path) -> list[int]:
    """The embedded PostgreSQL and Redis of ``var`` that still run (they are not the supervisor's children)."""
    alive = []
    for pid_file in (var / "pgdata" / "postmaster.pid", var / "redis" / "redis.pid"):
        with contextlib.suppress(FileNotFoundError, ValueError, IndexError):
            pid = int(pid_file.read_text().split()[0])
            if psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                alive.append(pid)
    return alive


def _manual(pages: int) -> str:
    return "\n\n".join(
        f"## Chapter {chapter}\n\n"
        + "\n\n".join(
            f"Procedure {chapter}.{step}: open valve {chapter * step}, wait {step} minutes, then record the "
            f"pressure reading {chapter * 1000 + step} and the temperature of boiler {chapter % 7} in the register."
            for step in range(1, 12)
        )
        for chapter in range(1, pages)
    )


def _node_counts(stack: Stack, doc_id: str) -> dict[str, int]:
    script = (
        "import json; from documents_app.models import Document, DocumentNode as N; "
        f"d = Document.objects.get(pk='{doc_id}'); rows = N.objects.filter(document=d); "
        "print(json.dumps({'rows': rows.count(), 'node_count': d.node_count, "
        "'places': rows.values('parent_uri', 'position').distinct().count()}))"
    )
    done = manage("shell", "-c", script, env=stack.env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_a_document_whose_worker_is_killed_midway_is_indexed_again_without_duplicates(stack):
    # Long enough to be still indexing well after its claim would have gone stale (every chapter is a
    # section of its own, so a shorter manual is done in a few seconds on a quiet machine).
    text = _manual(240)
    assert len(text.encode()) > 300_000
    doc_id = stack.upload("boiler-manual.md", text)
    _wait(
        lambda: stack.call(f"/api/documents/{doc_id}")[1]["status"] == "indexing",
        timeout=30,
        what="indexing to start",
        stack=stack,
    )
    # A live run keeps its claim fresh for longer than a claim lasts: nobody takes its work over.
    time.sleep(STALE_S * 2)
    assert stack.call(f"/api/documents/{doc_id}")[1]["status"] == "indexing"
    assert "queued again" not in stack.output()
    bulk = stack.children()["bulk"]
    (pool_process,) = bulk.children()
    pool_process.send_signal(signal.SIGKILL)
    killed = time.monotonic()

    document = _wait(
        lambda: (d := stack.call(f"/api/documents/{doc_id}")[1])["status"] in ("ready", "failed") and d,
        timeout=120,
        what="the document to be indexed again",
        stack=stack,
    )
    elapsed = time.monotonic() - killed
    print(f"ready {elapsed:.1f}s after its worker was killed")
    assert document["status"] == "ready", document
    assert stack.children()["bulk"].pid == bulk.pid, "only the pool process died, not the worker"
    counts = _node_counts(stack, doc_id)
    assert counts["rows"] == counts["node_count"] == counts["places"] > 100, counts


def test_a_killed_worker_or_daphne_is_restarted_and_the_others_keep_running(stack):
    before = stack.children()
    before["bulk"].send_signal(signal.SIGKILL)
    killed = time.monotonic()
    _wait(lambda: "bulk worker exited (code -9); restart #1" in stack.output(), timeout=10, what="a log", stack=stack)
    _wait(lambda: stack.children().get("bulk") and stack.healthy(), timeout=60, what="the restart", stack=stack)
    print(f"bulk worker answering again {time.monotonic() - killed:.1f}s after it was killed")
    after = stack.children()
    assert after["bulk"].pid != before["bulk"].pid
    unchanged = ("interactive", "daphne-1", "daphne-2")
    assert [after[role].pid for role in unchanged] == [before[role].pid for role in unchanged]

    # Two web processes share the port: while one is killed and restarted, the other answers.
    before = after
    before["daphne-1"].send_signal(signal.SIGKILL)
    killed = time.monotonic()
    assert stack.healthy(), "the other web process answers at once"
    _wait(lambda: "daphne-1 exited (code -9); restart #1" in stack.output(), timeout=10, what="a log", stack=stack)
    _wait(
        lambda: stack.children().get("daphne-1") and stack.children()["daphne-1"].pid != before["daphne-1"].pid,
        timeout=30,
        what="a new daphne-1",
        stack=stack,
    )
    _wait(stack.healthy, timeout=60, what="the site to answer", stack=stack)
    print(f"daphne-1 back {time.monotonic() - killed:.1f}s after it was killed")
    after = stack.children()
    unchanged = ("interactive", "bulk", "daphne-2")
    assert [after[role].pid for role in unchanged] == [before[role].pid for role in unchanged]


def test_a_killed_redis_comes_back_on_its_port_and_everything_reconnects(stack):
    port = json.loads((stack.var / "redis" / "state.json").read_text())["port"]
    pids = {role: process.pid for role, process in stack.children().items()}
    for _ in range(3):  # a worker holding a task when Redis went away used to die of it now and then
        old_pid = int((stack.var / "redis" / "redis.pid").read_text())
        os.kill(old_pid, signal.SIGKILL)
        killed = time.monotonic()

        def revived(old_pid=old_pid) -> bool:
            try:
                return int((stack.var / "redis" / "redis.pid").read_text()) != old_pid
            except (FileNotFoundError, ValueError):
                return False

        _wait(revived, timeout=15, what="Redis to be started again", stack=stack)
        assert json.loads((stack.var / "redis" / "state.json").read_text())["port"] == port
        _wait(stack.healthy, timeout=30, what="the site and workers to reconnect", stack=stack)
        print(f"healthy again {time.monotonic() - killed:.1f}s after Redis was killed")

    status, session = stack.call("/api/sessions", {"title": "after redis"})
    assert status == 201, session
    sid = session["session_id"]
    status, _ = stack.call(f"/api/sessions/{sid}/messages", {"messages": [{"role": "user", "content": "Hi there."}]})
    assert status == 201
    # The interactive worker got the embedding job through the revived broker.
    _wait(
        lambda: stack.call(f"/api/sessions/{sid}")[1]["messages"][0]["embedded"],
        timeout=30,
        what="the message to be embedded",
        stack=stack,
    )
    logged = len(stack.output())
    status, answer = stack.call("/api/ai/chat", {"message": "What did I say?", "session_id": sid}, timeout=30)
    assert status == 200 and answer["message"], answer
    # The chat reads and writes the session's working set through Daphne's own Django cache client,
    # which would only log a failure: it reconnected to the revived Redis.
    assert "working set of session" not in stack.output()[logged:]
    assert {role: process.pid for role, process in stack.children().items()} == pids, "nothing was restarted"


def test_a_killed_postgresql_is_started_again_and_everything_reconnects(stack):
    postmaster = stack.var / "pgdata" / "postmaster.pid"
    old_pid = int(postmaster.read_text().split()[0])
    pids = {role: process.pid for role, process in stack.children().items()}
    os.kill(old_pid, signal.SIGKILL)
    killed = time.monotonic()

    def revived() -> bool:
        try:
            return int(postmaster.read_text().split()[0]) != old_pid
        except (FileNotFoundError, ValueError, IndexError):
            return False

    _wait(revived, timeout=30, what="PostgreSQL to be started again", stack=stack)
    _wait(stack.healthy, timeout=30, what="the site and workers to reconnect", stack=stack)
    print(f"healthy again {time.monotonic() - killed:.1f}s after PostgreSQL was killed")
    status, session = stack.call("/api/sessions", {"title": "after postgres"})
    assert status == 201, session
    sid = session["session_id"]
    status, _ = stack.call(f"/api/sessions/{sid}/messages", {"messages": [{"role": "user", "content": "Still here."}]})
    assert status == 201
    _wait(
        lambda: stack.call(f"/api/sessions/{sid}")[1]["messages"][0]["embedded"],
        timeout=30,
        what="the message to be embedded",
        stack=stack,
    )
    assert {role: process.pid for role, process in stack.children().items()} == pids, "nothing was restarted"


def test_a_daphne_that_is_alive_but_answers_nothing_is_restarted(stack):
    """A live process the supervisor used to leave alone: frozen (as a process whose every thread waits
    forever would be), it holds its port and answers nothing until it is stopped and started again."""
    frozen = stack.children()["daphne-1"]
    others = {role: process.pid for role, process in stack.children().items() if role != "daphne-1"}
    exits = stack.output().count("daphne-1 exited")
    frozen.suspend()
    started = time.monotonic()
    try:
        _wait(
            lambda: "daphne-1 is running but its health check went unanswered" in stack.output(),
            timeout=HEALTH_RESTART_AFTER_S + 20,
            what="the supervisor to notice",
            stack=stack,
        )
        _wait(lambda: stack.output().count("daphne-1 exited") > exits, timeout=30, what="daphne-1 to stop", stack=stack)
        _wait(
            lambda: stack.children().get("daphne-1") and stack.children()["daphne-1"].pid != frozen.pid,
            timeout=60,
            what="a new daphne-1",
            stack=stack,
        )
        _wait(stack.healthy, timeout=60, what="the site to answer", stack=stack)
    finally:
        with contextlib.suppress(psutil.Error):
            frozen.resume()
    print(f"daphne-1 replaced {time.monotonic() - started:.1f}s after it froze")
    assert not frozen.is_running()
    assert {role: process.pid for role, process in stack.children().items() if role != "daphne-1"} == others
