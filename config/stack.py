"""Runs everything Recollect needs on one machine: ``python -m config.stack`` (``make run``).

It starts (or reuses) the database and Redis, applies migrations, then runs a Celery worker and
Daphne (HTTP and websockets) as child processes until Ctrl-C or SIGTERM, and stops them all.
The children run in their own process groups, so a terminal's Ctrl-C reaches this supervisor only and
each child gets exactly one orderly SIGTERM; they also die with the supervisor if it is killed.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

STOP_TIMEOUT_S = 20.0
READY_TIMEOUT_S = 60.0


def _die_with_parent() -> None:
    # Linux PR_SET_PDEATHSIG: if the supervisor is SIGKILLed, the kernel sends its children SIGTERM.
    with contextlib.suppress(OSError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)


def _spawn(name: str, argv: list[str]) -> subprocess.Popen:
    print(f"[recollect] starting {name}: {' '.join(argv[1:])}", flush=True)
    return subprocess.Popen(argv, start_new_session=True, preexec_fn=_die_with_parent)


def _stop(children: dict[str, subprocess.Popen]) -> None:
    for proc in children.values():
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    for name, proc in children.items():
        try:
            proc.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            print(f"[recollect] {name} did not stop in {STOP_TIMEOUT_S:.0f}s; killing it", flush=True)
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


def _wait_until_ready(url: str, children: dict[str, subprocess.Popen]) -> bool:
    deadline = time.monotonic() + READY_TIMEOUT_S
    while time.monotonic() < deadline:
        if any(proc.poll() is not None for proc in children.values()):
            return False
        try:
            with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 (our own http:// URL)
                if response.status == 200:
                    return True
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.2)
    return False


def _ensure_first_admin(var: Path) -> None:
    """On a brand-new database, an ``admin`` account so the admin pages can be opened at once."""
    from django.contrib.auth import get_user_model

    users = get_user_model()
    if users.objects.exists():
        return
    password = secrets.token_urlsafe(12)
    users.objects.create_superuser(username="admin", email="", password=password)
    secret = var / "initial-admin-password"
    secret.write_text(password + "\n")
    secret.chmod(0o600)
    print(
        f"[recollect] created the user 'admin' with password {password} (also in {secret}); change it in the admin.",
        flush=True,
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m config.stack", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default=os.environ.get("RECOLLECT_HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("RECOLLECT_PORT", "8000")))
    parser.add_argument("--concurrency", type=int, default=None, help="Celery worker processes")
    args = parser.parse_args(argv)

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.dev")
    import django

    django.setup()  # starts or reuses the embedded servers; this process holds them until it exits
    from django.conf import settings
    from django.core.management import call_command

    from config.embedded import var_dir

    call_command("migrate", interactive=False, verbosity=1)
    _ensure_first_admin(var_dir())

    stopping = False

    def request_stop(signum: int, frame: object) -> None:
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)

    concurrency = args.concurrency or settings.CELERY_WORKER_CONCURRENCY
    children = {
        "worker": _spawn(
            "worker",
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "worker",
                "--loglevel",
                "INFO",
                "--concurrency",
                str(concurrency),
                "--hostname",
                f"recollect-{args.port}@%h",
            ],
        ),
        "daphne": _spawn(
            "daphne",
            [sys.executable, "-m", "daphne", "-b", args.host, "-p", str(args.port), "config.asgi:application"],
        ),
    }
    base_url = f"http://{args.host}:{args.port}"
    if _wait_until_ready(f"{base_url}/api/health", children):
        print(
            f"[recollect] ready at {base_url}/  (admin {base_url}/admin/, API docs {base_url}/api/docs/)."
            " Ctrl-C stops everything.",
            flush=True,
        )
    exit_code = 0
    while not stopping:
        failed = [name for name, proc in children.items() if proc.poll() is not None]
        if failed:
            print(f"[recollect] {', '.join(failed)} exited unexpectedly; stopping the rest", flush=True)
            exit_code = 1
            break
        time.sleep(0.2)
    print("[recollect] stopping ...", flush=True)
    _stop(children)
    print("[recollect] stopped.", flush=True)
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
