"""Tiny uploads that would cost a worker minutes or gigabytes, on the real stack (Daphne, a bulk Celery
worker with two processes, PostgreSQL, Redis): each fails quickly with a reason a person can act on, and
another person's small note is indexed meanwhile within a few seconds, as if nobody else were uploading.

One person uploads, in this order: two PDFs that would each take half a minute of CPU to read (under the
content cap, so only the reading budget, 8 s of CPU here, stops them), a PDF whose 20 pages share one
5 MB content stream (over the cap) and a DOCX whose styles.xml unpacks to 9 MB. Right after, someone else
uploads a 40-byte note. The test prints how long that note waited and how long each bomb took to fail.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
import urllib.request
import uuid

import pytest
from rest_framework.authtoken.models import Token

from tests.documents_app import files
from tests.factories import UserFactory
from tests.helpers import ROOT, clean_env, database_url, free_port, start_daphne, wait_until
from tests.outage.conftest import PrivateRedis

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

MB = 1024 * 1024
READING_CPU_S = 8
# "A few seconds": the most another person's note may wait while the bombs are being read.
NOTE_WAIT_MAX_S = 5.0


@pytest.fixture
def stack(tmp_path):
    """A private Redis, Daphne and one bulk worker of two processes on the test database; yields the base URL."""
    redis = PrivateRedis(tmp_path / "redis")
    redis.directory.mkdir()
    redis.start()
    (tmp_path / "media").mkdir()
    env = clean_env(
        DJANGO_SETTINGS_MODULE="config.settings.dev",
        DATABASE_URL=database_url(),
        REDIS_URL=redis.url,
        MEDIA_ROOT=str(tmp_path / "media"),
        DOCUMENT_PARSE_CPU_S=str(READING_CPU_S),
    )
    log_path = tmp_path / "worker.log"
    log = log_path.open("w")
    argv = [sys.executable, "-m", "celery", "-A", "config", "worker", "--queues", "bulk", "--concurrency", "2"]
    argv += ["--loglevel", "INFO", "--hostname", f"bulk-{free_port()}@%h"]
    worker = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    daphne = None
    try:
        wait_until(lambda: _started(worker, log_path), timeout=90, what="the bulk worker to start")
        base, daphne = start_daphne(env=env, log=tmp_path / "daphne.log")
        yield base
    finally:
        for process in (daphne, worker):
            if process is not None and process.poll() is None:
                process.terminate()
                process.wait(timeout=30)
        log.close()
        redis.kill()


def _started(worker: subprocess.Popen, log_path) -> bool:
    assert worker.poll() is None, log_path.read_text()[-3000:]
    return " ready." in log_path.read_text()


def _upload(base: str, token: str, name: str, data: bytes) -> str:
    boundary = uuid.uuid4().hex
    head = f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n\r\n'
    request = urllib.request.Request(
        f"{base}/api/documents/upload",
        data=head.encode() + data + f"\r\n--{boundary}--\r\n".encode(),
        headers={"Authorization": f"Token {token}", "Content-Type": f"multipart/form-data; boundary={boundary}"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        assert response.status == 202
        return json.loads(response.read())["doc_id"]


def _document(base: str, token: str, doc_id: str) -> dict:
    request = urllib.request.Request(f"{base}/api/documents/{doc_id}", headers={"Authorization": f"Token {token}"})
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def _settled(base: str, token: str, doc_ids: list[str], *, timeout: float) -> dict[str, tuple[dict, float]]:
    """Each document once it is ready or failed, with the seconds it took from now."""
    started, done = time.monotonic(), {}
    while len(done) < len(doc_ids):
        assert time.monotonic() - started < timeout, f"still indexing after {timeout}s: {set(doc_ids) - set(done)}"
        for doc_id in set(doc_ids) - set(done):
            document = _document(base, token, doc_id)
            if document["status"] in ("ready", "failed"):
                done[doc_id] = (document, time.monotonic() - started)
        time.sleep(0.1)
    return done


def test_bombs_fail_quickly_with_their_reasons_while_another_persons_note_is_indexed_at_once(stack):
    uploader, other = Token.objects.create(user=UserFactory()).key, Token.objects.create(user=UserFactory()).key
    bombs = {
        "slow-1.pdf": files.pdf_bomb(pages=6, stream_bytes=5 * MB),
        "slow-2.pdf": files.pdf_bomb(pages=6, stream_bytes=5 * MB - 1000),
        "shared-stream.pdf": files.pdf_bomb(pages=20, stream_bytes=5 * MB),
        "styles.docx": files.docx_styles_bomb(styles_bytes=9 * MB),
    }
    ids = {name: _upload(stack, uploader, name, data) for name, data in bombs.items()}
    wait_until(
        lambda: _document(stack, uploader, ids["slow-1.pdf"])["status"] == "indexing",
        timeout=30,
        what="the first bomb to be read",
    )
    uploaded = time.monotonic()
    note = _upload(stack, other, "note.txt", b"Call the plumber about the boiler on Monday.")
    ((document, _),) = _settled(stack, other, [note], timeout=60).values()
    waited = time.monotonic() - uploaded
    print(f"\nanother person's 44-byte note: {document['status']} {waited:.1f}s after its upload")
    assert document["status"] == "ready"
    assert waited < NOTE_WAIT_MAX_S

    results = _settled(stack, uploader, list(ids.values()), timeout=90)
    for name, doc_id in ids.items():
        document, seconds = results[doc_id]
        print(
            f"{name} ({len(bombs[name]) / 1024:.0f} KB): {document['status']} after {seconds:.1f}s more: "
            f"{document['error']}"
        )
        assert document["status"] == "failed"
    assert results[ids["slow-1.pdf"]][0]["error"].startswith(
        f"Reading the file took more than {READING_CPU_S} s of computing time."
    )
    assert results[ids["slow-2.pdf"]][0]["error"].startswith("Reading the file took more than")
    assert "draw more than 32 MB of content" in results[ids["shared-stream.pdf"]][0]["error"]
    assert "word/styles.xml unpacks to 9 MB" in results[ids["styles.docx"]][0]["error"]
