"""More than one machine: two web processes and two workers per queue, started with the very commands of
``deploy/systemd`` under the production settings, against one PostgreSQL and one Redis (the test's own).
Chat turns, uploads and recalls are spread over both web processes, and nothing is lost or done twice:
every turn stored once and in order, every document indexed once, each kind of job taken by both workers
of its queue, and what was said to one machine found through the other."""

from __future__ import annotations

import json
import re
import secrets
import shlex
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from rest_framework.authtoken.models import Token

from documents_app.models import Document, DocumentNode
from sessions_app.models import Message
from tests.factories import UserFactory
from tests.helpers import ROOT, clean_env, database_url, free_port, upload_markdown, wait_until
from tests.outage.conftest import PrivateRedis

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

UNITS = ROOT / "deploy" / "systemd"
APP_DIR = "/srv/recollect/app"
TURNS = 12
DOCUMENTS = 4


def unit_command(unit: str, *, instance: str, host: str) -> list[str]:
    """The unit's ExecStart as systemd would run it here: its specifiers expanded (%i the instance, %H
    the machine's name), the application's directory this checkout, its virtualenv the test's."""
    text = (UNITS / unit).read_text()
    line = next(line for line in text.splitlines() if line.startswith("ExecStart="))[len("ExecStart=") :]
    line = line.replace("%%", "\0").replace("%i", instance).replace("%H", host).replace("\0", "%")
    line = line.replace("$$", "$").replace(f"{APP_DIR}/.venv/bin/", str(Path(sys.executable).parent) + "/")
    return shlex.split(line.replace(APP_DIR, str(ROOT)))


def _call(base: str, token: str, path: str, body: dict | None = None, *, timeout: float = 60) -> tuple[int, dict]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(
        f"{base}{path}", data=data, headers={"Authorization": f"Token {token}", "Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, json.loads(response.read() or b"{}")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"{}")


@pytest.fixture
def two_machines(tmp_path):
    """Machines "a" and "b", each with a web process and a worker per queue, one scheduler, one Redis."""
    redis = PrivateRedis(tmp_path / "redis")
    redis.directory.mkdir()
    redis.start()
    media = tmp_path / "media"  # the shared volume both machines mount
    media.mkdir()
    env = clean_env(
        DJANGO_SETTINGS_MODULE="config.settings.production",
        SECRET_KEY=secrets.token_urlsafe(50),
        DATABASE_URL=database_url(),
        REDIS_URL=redis.url,
        ALLOWED_HOSTS="127.0.0.1,localhost",
        NUM_PROXIES="1",
        SECURE_SSL_REDIRECT="false",
        MEDIA_ROOT=str(media),
        WORKER_CONCURRENCY="1",
    )
    processes: dict[str, tuple[subprocess.Popen, Path]] = {}

    def start(name: str, argv: list[str]) -> None:
        log = tmp_path / f"{name}.log"
        output = log.open("w")
        processes[name] = (subprocess.Popen(argv, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT), log)

    ports = {machine: free_port() for machine in ("a", "b")}
    try:
        for machine in ("a", "b"):
            start(f"web-{machine}", unit_command("recollect-web@.service", instance=str(ports[machine]), host=machine))
            for queue in ("interactive", "bulk"):
                start(f"{queue}-{machine}", unit_command("recollect-worker@.service", instance=queue, host=machine))
        scheduler = unit_command("recollect-beat.service", instance="", host="a")
        scheduler[scheduler.index("--schedule") + 1] = str(tmp_path / "celerybeat-schedule")
        start("scheduler", scheduler)
        bases = {machine: f"http://127.0.0.1:{port}" for machine, port in ports.items()}

        def up() -> bool:
            for name, (process, log) in processes.items():
                assert process.poll() is None, f"{name} exited:\n{log.read_text()[-3000:]}"
            workers = [log for name, (_, log) in processes.items() if name.startswith(("interactive", "bulk"))]
            if not all(" ready." in log.read_text() for log in workers):
                return False
            try:
                return all(
                    urllib.request.urlopen(f"{base}/api/health", timeout=2).status == 200 for base in bases.values()
                )
            except OSError:
                return False

        wait_until(up, timeout=120, what="both machines to serve")
        yield bases, processes
    finally:
        for process, _ in processes.values():
            if process.poll() is None:
                process.terminate()
        for process, _ in processes.values():
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
        redis.kill()


def _jobs_done(log: Path, task: str) -> int:
    return len(re.findall(rf"Task {re.escape(task)}\[[^\]]+\] succeeded", log.read_text()))


def test_chat_upload_and_recall_spread_over_two_machines_lose_and_repeat_nothing(two_machines):
    bases, processes = two_machines
    user = UserFactory()
    token = Token.objects.create(user=user).key
    machines = ["a", "b"]

    # A conversation whose turns alternate between the machines.
    session_id = None
    for turn in range(TURNS):
        base = bases[machines[turn % 2]]
        body = {"message": f"Note {turn}: the greenhouse sensor {turn} reads {20 + turn} degrees."}
        if session_id:
            body["session_id"] = session_id
        status, answer = _call(base, token, "/api/ai/chat", body)
        assert status == 200, answer
        session_id = answer["session_id"]
    # Documents uploaded to either machine, indexed by either bulk worker.
    doc_ids = [
        upload_markdown(
            bases[machines[n % 2]],
            token,
            f"manual-{n}.md",
            f"# Pump {n}\n\n## Care\n\nOil pump {n} every {n + 2} weeks.",
        )
        for n in range(DOCUMENTS)
    ]

    def indexed() -> bool:
        statuses = {_call(bases["a"], token, f"/api/documents/{doc_id}")[1]["status"] for doc_id in doc_ids}
        assert "failed" not in statuses
        return statuses == {"ready"}

    wait_until(indexed, timeout=180, what="every document to be indexed")
    wait_until(
        # The built-in answers quote passages: the product's own words, never embedded.
        lambda: not Message.objects.said().filter(session_id=session_id, embedding__isnull=True).exists(),
        timeout=60,
        what="every turn said to be embedded",
    )

    # Every turn once, in order: a question and an answer each.
    seqs = list(Message.objects.filter(session_id=session_id).order_by("seq").values_list("seq", "role"))
    assert [seq for seq, _ in seqs] == list(range(1, 2 * TURNS + 1))
    assert [role for _, role in seqs] == ["user", "assistant"] * TURNS
    # Every document once: one tree each, no node twice.
    assert Document.objects.filter(owner=user).count() == DOCUMENTS
    uris = list(DocumentNode.objects.filter(owner=user).values_list("uri", flat=True))
    assert len(uris) == len(set(uris)) and {u.split("/documents/")[1][:36] for u in uris} == set(doc_ids)

    # What was told to machine "a" is recalled through "b", and a manual uploaded to "b" found through "a".
    _, recalled = _call(bases["b"], token, "/api/memory/recall", {"query": "greenhouse sensor 4 degrees"})
    assert any("sensor 4 reads 24" in message["content"] for message in recalled["messages"])
    _, found = _call(bases["a"], token, "/api/retrieval/find", {"query": "how often to oil pump 3"})
    assert found["results"] and "Oil pump 3 every 5 weeks" in json.dumps(found["results"])

    # Each queue's two workers both took jobs.
    for queue, task in (("interactive", "core.embed_rows"), ("bulk", "documents.index_document")):
        done = {machine: _jobs_done(processes[f"{queue}-{machine}"][1], task) for machine in machines}
        assert sum(done.values()) >= 2 and all(done.values()), (queue, done)
