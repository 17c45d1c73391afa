"""``make run``'s supervisor on a brand-new data directory: it starts everything, serves, stops cleanly,
and a second start reuses what the first one made."""

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import psutil
import pytest

from foundation.celery import AUTOGROUP, session_group_niceness
from tests.helpers import ROOT, clean_env, free_port, upload_markdown

pytestmark = pytest.mark.slow


def _get(url: str, data: bytes | None = None, token: str = "") -> tuple[int, dict]:
    headers = {"Content-Type": "application/json", **({"Authorization": f"Token {token}"} if token else {})}
    request = urllib.request.Request(url, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=5) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


def _wait_for_workers(base: str, proc: subprocess.Popen, timeout: float = 120) -> dict:
    deadline = time.monotonic() + timeout
    body: dict = {}
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the run command exited before it was ready"
        try:
            status, body = _get(f"{base}/api/health?deep=1")
            if status == 200:
                return body
        except OSError:
            pass
        time.sleep(0.5)
    raise AssertionError(f"not healthy in {timeout}s: {body}")


def _start(var: Path, port: int) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "config.stack", "--port", str(port), "--concurrency", "1"],
        cwd=ROOT,
        env=clean_env(RECOLLECT_VAR_DIR=str(var), DJANGO_SETTINGS_MODULE="config.settings.dev"),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _stop(proc: subprocess.Popen) -> tuple[int, str]:
    descendants = psutil.Process(proc.pid).children(recursive=True)
    proc.send_signal(signal.SIGINT)  # what Ctrl-C in the terminal sends
    output, _ = proc.communicate(timeout=60)
    _gone, alive = psutil.wait_procs(descendants, timeout=10)
    assert not alive, f"left running: {[p.name() for p in alive]}"
    return proc.returncode, output


def _servers_running(var: Path) -> list[str]:
    names = []
    for process in psutil.process_iter(["name", "cmdline"]):
        cmdline = " ".join(process.info["cmdline"] or [])
        if str(var) in cmdline and process.info["name"] in ("postgres", "redis-server"):
            names.append(process.info["name"])
    redis_pid = var / "redis" / "redis.pid"
    if redis_pid.exists() and psutil.pid_exists(int(redis_pid.read_text())):
        names.append("redis-server")
    return names


def test_run_starts_everything_serves_http_and_stops_cleanly_then_reuses_its_data(tmp_path):
    var = tmp_path / "var"
    port = free_port()
    base = f"http://127.0.0.1:{port}"

    first = _start(var, port)
    try:
        health = _wait_for_workers(base, first)
        assert health["workers"]["ok"] and health["database"]["ok"] and health["redis"]["ok"]
        _workers_yield_to_the_web_processes(first)
        with urllib.request.urlopen(f"{base}/admin/login/", timeout=5) as page:
            assert page.status == 200 and b"Recollect" in page.read()
    finally:
        code, output = _stop(first)
    assert code == 0, output
    assert "stopped." in output
    assert output.rindex("warmed up in") < output.index("[recollect] ready at"), "ready before the web processes warmed"
    assert not _servers_running(var), "the embedded servers outlived the last process using them"

    password = (var / "initial-admin-password").read_text().strip()
    second = _start(var, port)
    try:
        _wait_for_workers(base, second)
        body = json.dumps({"username": "admin", "password": password}).encode()
        status, token = _get(f"{base}/api/auth/token", data=body)
        assert status == 200 and token["token"], "the first run's account did not survive a restart"
        _the_worker_embeds_recorded_messages(base, token["token"])
        _a_message_is_found_by_meaning_while_documents_are_indexed(base, token["token"])
        _the_worker_indexes_an_uploaded_document(base, token["token"])
    finally:
        code, output = _stop(second)
    assert code == 0, output
    assert "created the user 'admin'" not in output
    assert not _servers_running(var)


def _workers_yield_to_the_web_processes(proc: subprocess.Popen) -> None:
    """In a burst the processor goes first to the web processes, then to interactive work, then to bulk
    (never less nice than the run command itself was started); where the kernel shares the processor
    between sessions first, each worker's session yields too."""
    started_at = os.nice(0)
    niceness: dict[str, set[int]] = {}
    groups: dict[str, set[int]] = {}
    for child in psutil.Process(proc.pid).children(recursive=True):
        command = " ".join(child.cmdline())
        role = "bulk" if "--queues bulk" in command else "interactive" if "--queues interactive" in command else ""
        role = role or ("web" if "daphne" in command else "")
        if role:
            niceness.setdefault(role, set()).add(child.nice())
            if AUTOGROUP.exists():
                groups.setdefault(role, set()).add(session_group_niceness(child.pid))
    expected = {"web": {started_at}, "interactive": {max(5, started_at)}, "bulk": {max(10, started_at)}}
    assert niceness == expected, niceness
    if AUTOGROUP.exists():
        assert groups == {"web": {0}, "interactive": {5}, "bulk": {10}}, groups


def _the_worker_embeds_recorded_messages(base: str, token: str) -> None:
    status, session = _get(f"{base}/api/sessions", data=b'{"title": "stack test"}', token=token)
    assert status == 201
    messages = {"messages": [{"role": "user", "content": "The deploy pipeline needs a manual approval step."}]}
    status, _ = _get(f"{base}/api/sessions/{session['session_id']}/messages", json.dumps(messages).encode(), token)
    assert status == 201
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        _, detail = _get(f"{base}/api/sessions/{session['session_id']}", token=token)
        if detail["messages"][0]["embedded"]:
            return
        time.sleep(0.5)
    raise AssertionError("the Celery worker did not embed the message")


def _a_message_is_found_by_meaning_while_documents_are_indexed(base: str, token: str) -> None:
    """Bulk indexing fills its own queue; a message recorded meanwhile is embedded at once."""
    manuals = [
        "\n\n".join(
            f"## Part {part}\n\nStep {part}.{step} of manual {number}: turn valve {part * step} by {step} degrees "
            f"and log pressure reading {number * 1000 + part * 10 + step} in the plant register."
            for part in range(1, 100)
            for step in range(1, 4)
        )
        for number in range(6)
    ]
    documents = [upload_markdown(base, token, f"manual-{number}.md", text) for number, text in enumerate(manuals)]
    status, session = _get(f"{base}/api/sessions", data=b'{"title": "food"}', token=token)
    messages = {"messages": [{"role": "user", "content": "I am allergic to shellfish."}]}
    status, _ = _get(f"{base}/api/sessions/{session['session_id']}/messages", json.dumps(messages).encode(), token)
    assert status == 201
    deadline = time.monotonic() + 5  # a worker busy with documents would take far longer
    recall = json.dumps({"query": "Which seafood should be avoided?"}).encode()
    while time.monotonic() < deadline:
        _, found = _get(f"{base}/api/memory/recall", data=recall, token=token)
        if any(m["content"] == "I am allergic to shellfish." and m["similarity"] for m in found["messages"]):
            statuses = [_get(f"{base}/api/documents/{doc_id}", token=token)[1]["status"] for doc_id in documents]
            assert set(statuses) != {"ready"}, "the bulk queue should still have been busy"
            return
        time.sleep(0.2)
    raise AssertionError("a message recorded during a bulk ingest was not found by meaning")


def _the_worker_indexes_an_uploaded_document(base: str, token: str) -> None:
    doc_id = upload_markdown(base, token, "guide.md", "# Guide\n\nThe warranty covers parts and labour for two years.")
    deadline = time.monotonic() + 180  # behind the manuals above, on the bulk queue
    while time.monotonic() < deadline:
        _, document = _get(f"{base}/api/documents/{doc_id}", token=token)
        if document["status"] == "ready":
            assert "warranty" in document["overview"].lower()
            return
        assert document["status"] in ("pending", "indexing"), document
        time.sleep(0.5)
    raise AssertionError("the Celery worker did not index the document")
