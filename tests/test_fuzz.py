"""The API fuzzed against its own OpenAPI schema by schemathesis, over HTTP to a real Daphne process:
whatever a client sends, no answer is a server error, and every answer keeps to the schema (its status
is documented, its media type and its body are as documented).

Bounded for ``make test``; ``make fuzz`` runs the same test with many more cases per operation
(``FUZZ_MAX_EXAMPLES``, ``FUZZ_PHASES``, ``FUZZ_SEED`` override the defaults below)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import psutil
import pytest
from rest_framework.authtoken.models import Token

from tests.factories import ChatSessionFactory, MemoryFactory, MessageFactory, index_document
from tests.helpers import ROOT, server_env, start_daphne
from tests.samples import KETTLE

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

CHECKS = [
    "not_a_server_error",
    "status_code_conformance",
    "content_type_conformance",
    "response_headers_conformance",
    "response_schema_conformance",
]


@pytest.fixture
def daphne(tmp_path):
    """One Daphne serving the test database, its log kept so a server error's traceback can be shown."""
    base, process = start_daphne(env=server_env(), log=tmp_path / "daphne.log")
    yield base, tmp_path / "daphne.log"
    process.terminate()
    process.wait(timeout=20)


def _run_bounded(command: list[str], *, timeout: float, **kwargs) -> tuple[int, str, str]:
    """Runs ``command``, killed if it outlives ``timeout`` or its memory passes FUZZ_MAX_MEMORY_MB: the
    machine running the suite is shared, so a generator that runs away fails this test, not the machine."""
    limit = int(os.environ.get("FUZZ_MAX_MEMORY_MB", "3072")) * 1024 * 1024
    with tempfile.TemporaryFile("w+") as stdout, tempfile.TemporaryFile("w+") as stderr:
        process = subprocess.Popen(command, stdout=stdout, stderr=stderr, text=True, **kwargs)
        watched = psutil.Process(process.pid)
        deadline = time.monotonic() + timeout
        killed = ""
        while process.poll() is None:
            try:
                rss = watched.memory_info().rss
            except psutil.NoSuchProcess:
                break
            if rss > limit or time.monotonic() > deadline:
                killed = f"\nkilled: {rss // 2**20} MiB resident, {time.monotonic() - deadline + timeout:.0f}s\n"
                process.kill()
            time.sleep(0.5)
        process.wait()
        stdout.seek(0)
        stderr.seek(0)
        return process.returncode, stdout.read(), stderr.read() + killed


def _seed(user) -> None:
    """Something of everything, so that answers with content are checked against the schema too."""
    session = ChatSessionFactory(owner=user, title="Kettle care")
    MessageFactory(session=session, role="user", content="How often should I descale the Aurora kettle?")
    MessageFactory(session=session, role="assistant", content="Every four weeks, with citric acid.")
    MemoryFactory(owner=user, category="preferences", content="Prefers citric acid to vinegar for descaling.")
    index_document(user, "kettle.md", KETTLE)


def test_fuzzing_the_api_finds_no_server_error_and_no_answer_outside_the_schema(user, daphne, tmp_path):
    base, daphne_log = daphne
    _seed(user)
    token = Token.objects.create(user=user).key
    out = Path(os.environ.get("FUZZ_REPORT_DIR") or tmp_path)
    out.mkdir(parents=True, exist_ok=True)
    report = out / "report.json"
    started = time.monotonic()
    returncode, stdout, stderr = _run_bounded(
        [
            str(Path(sys.executable).with_name("schemathesis")),
            "run",
            f"{base}/api/schema/",
            "--header",
            f"Authorization: Token {token}",
            "--checks",
            ",".join(CHECKS),
            "--phases",
            # About a minute on a laptop: the coverage phase's boundary values, then 30 random cases each.
            os.environ.get("FUZZ_PHASES", "coverage,fuzzing"),
            "--max-examples",
            os.environ.get("FUZZ_MAX_EXAMPLES", "30"),
            "--seed",
            os.environ.get("FUZZ_SEED", "20261123"),
            "--workers",
            "1",
            "--request-timeout",
            "30",
            "--continue-on-failure",
            "--generation-database",
            "none",
            "--no-color",
            "--report",
            "json",
            "--report-json-path",
            str(report),
            *os.environ.get("FUZZ_ARGS", "").split(),
        ],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        timeout=3600,
    )
    elapsed = time.monotonic() - started
    (out / "schemathesis.txt").write_text(stdout + stderr)
    print(stdout[-3000:], f"\nschemathesis took {elapsed:.0f}s; its report is in {out}")
    problems = stdout[-12000:] + stderr[-4000:] + daphne_log.read_text()[-6000:]
    assert report.exists() and report.stat().st_size, f"schemathesis exited {returncode}:\n{problems}"
    summary = json.loads(report.read_text())
    assert summary["operations"]["tested"] == summary["operations"]["selected"] > 0, problems
    assert summary["test_cases"]["generated"] > 0, problems
    # Every kind of failure (a 5xx, an undocumented status or media type, a body outside its schema)
    # and every error (a dropped connection, a timeout) fails the test.
    assert not summary["failures"] and not summary["errors"], problems
    assert returncode == 0, problems
