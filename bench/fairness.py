"""Fairness on the bulk queue: how long another person's small note waits while one person's uploads
keep the bulk worker busy, with each person's documents taking their turn and without.

    .venv/bin/python bench/fairness.py                 # 2 slow PDFs, an 8 s reading budget (about 2 minutes)
    .venv/bin/python bench/fairness.py --slow 4 --cpu 5

It runs what ``make run`` runs for the bulk queue, on a database of its own (``recollect_bench_fairness``):
a private Redis, one bulk Celery worker of two processes and Daphne. One person uploads ``--slow`` PDFs
that would each take half a minute of CPU to read (under the content cap, so only the reading budget of
``--cpu`` seconds stops them), a PDF of 20 pages sharing one 5 MB stream and a DOCX with a 9 MB styles.xml;
half a second later another person uploads a 44-byte note. Reported: the note's wait from its upload to
"ready", and when and why each of the first person's documents failed, once with DOCUMENT_INDEX_PER_USER=1
(the default) and once with it at 100 (no turn: the behaviour before it).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from pathlib import Path

from _setup import ROOT, django_for_bench

MB = 1024 * 1024
NOTE = b"Call the plumber about the boiler on Monday."


def _call(url: str, token: str, body: bytes | None = None, content_type: str = "") -> dict:
    headers = {"Authorization": f"Token {token}"} | ({"Content-Type": content_type} if content_type else {})
    request = urllib.request.Request(url, data=body, headers=headers)  # noqa: S310 (the loopback URL built here)
    with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310
        return json.loads(response.read())


def _upload(base: str, token: str, name: str, data: bytes) -> str:
    boundary = uuid.uuid4().hex
    head = f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{name}"\r\n\r\n'
    body = head.encode() + data + f"\r\n--{boundary}--\r\n".encode()
    return _call(f"{base}/api/documents/upload", token, body, f"multipart/form-data; boundary={boundary}")["doc_id"]


def _status(base: str, token: str, doc_id: str) -> dict:
    return _call(f"{base}/api/documents/{doc_id}", token)


def _settle(base: str, token: str, doc_ids: dict[str, str], started: float, timeout: float = 600) -> dict:
    done: dict[str, dict] = {}
    while len(done) < len(doc_ids) and time.monotonic() - started < timeout:
        for name, doc_id in doc_ids.items():
            if name not in done and (document := _status(base, token, doc_id))["status"] in ("ready", "failed"):
                done[name] = {"status": document["status"], "after_s": round(time.monotonic() - started, 1)}
                done[name]["error"] = document["error"][:90]
        time.sleep(0.1)
    return done


def _stack(env: dict[str, str], logs: Path):
    from tests.helpers import free_port, start_daphne

    log = (logs / "worker.log").open("w")
    argv = [sys.executable, "-m", "celery", "-A", "config", "worker", "--queues", "bulk", "--concurrency", "2"]
    argv += ["--loglevel", "INFO", "--hostname", f"bench-{free_port()}@%h"]
    worker = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    while " ready." not in (logs / "worker.log").read_text():
        assert worker.poll() is None, (logs / "worker.log").read_text()[-2000:]
        time.sleep(0.3)
    base, daphne = start_daphne(env=env, log=logs / "daphne.log")
    return base, [daphne, worker]


def _round(env: dict[str, str], *, per_user: int, slow: int) -> dict:
    from rest_framework.authtoken.models import Token

    from tests.documents_app import files
    from tests.factories import UserFactory

    # New people each round: the same bytes uploaded again by the same person are the same document.
    tokens = (Token.objects.create(user=UserFactory()).key, Token.objects.create(user=UserFactory()).key)

    logs = Path(tempfile.mkdtemp(prefix="recollect-fairness-"))
    base, processes = _stack({**env, "DOCUMENT_INDEX_PER_USER": str(per_user)}, logs)
    try:
        uploads = {f"slow-{n}.pdf": files.pdf_bomb(pages=6, stream_bytes=5 * MB - n * 1000) for n in range(slow)}
        uploads["shared-stream.pdf"] = files.pdf_bomb(pages=20, stream_bytes=5 * MB)
        uploads["styles.docx"] = files.docx_styles_bomb(styles_bytes=9 * MB)
        started = time.monotonic()
        ids = {name: _upload(base, tokens[0], name, data) for name, data in uploads.items()}
        time.sleep(0.5)
        note_started = time.monotonic()
        note = _settle(base, tokens[1], {"note.txt": _upload(base, tokens[1], "note.txt", NOTE)}, note_started)
        bombs = _settle(base, tokens[0], ids, started)
        return {"DOCUMENT_INDEX_PER_USER": per_user, "note": note["note.txt"], "bombs": bombs}
    finally:
        for process in processes:
            process.terminate()
            process.wait(timeout=30)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--slow", type=int, default=2, help="slow PDFs the first person uploads")
    parser.add_argument("--cpu", type=int, default=8, help="DOCUMENT_PARSE_CPU_S of the worker")
    args = parser.parse_args()
    django_for_bench("recollect_bench_fairness")

    from tests.helpers import clean_env
    from tests.outage.conftest import PrivateRedis

    scratch = Path(tempfile.mkdtemp(prefix="recollect-fairness-"))
    (scratch / "redis").mkdir()
    (scratch / "media").mkdir()
    redis = PrivateRedis(scratch / "redis")
    redis.start()
    env = clean_env(
        DJANGO_SETTINGS_MODULE="config.settings.dev",
        DATABASE_URL=os.environ["DATABASE_URL"],
        REDIS_URL=redis.url,
        MEDIA_ROOT=str(scratch / "media"),
        DOCUMENT_PARSE_CPU_S=str(args.cpu),
        LOG_LEVEL="WARNING",
    )
    try:
        report = [_round(env, per_user=per_user, slow=args.slow) for per_user in (1, 100)]
    finally:
        redis.kill()
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
