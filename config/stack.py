"""Runs everything Recollect needs on one machine: ``python -m config.stack`` (``make run``).

It starts (or reuses) the database and Redis, applies migrations, then runs two Celery workers (one
for interactive work, one for bulk work such as indexing) and Daphne (HTTP and websockets) as child
processes until Ctrl-C or SIGTERM, and stops them all.
The children run in their own process groups, so a terminal's Ctrl-C reaches this supervisor only and
each child gets exactly one orderly SIGTERM; they also die with the supervisor if it is killed.
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import ipaddress
import os
import secrets
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from config.celery import BULK_QUEUE, INTERACTIVE_QUEUE

STOP_TIMEOUT_S = 20.0
READY_TIMEOUT_S = 60.0


def _die_with_parent() -> None:
    # Linux PR_SET_PDEATHSIG: if the supervisor is SIGKILLed, the kernel sends its children SIGTERM.
    with contextlib.suppress(OSError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)


def _spawn(name: str, argv: list[str]) -> subprocess.Popen:
    print(f"[recollect] starting {name}: {' '.join(argv[1:])}", flush=True)
    return subprocess.Popen(argv, start_new_session=True, preexec_fn=_die_with_parent)


def _kill(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


def _stop(children: dict[str, subprocess.Popen], signals: list[int]) -> None:
    for proc in children.values():
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT_S
    for name, proc in children.items():
        while proc.poll() is None:
            if len(signals) > 1:  # a second Ctrl-C: the user does not want to wait
                _kill(proc)
            elif time.monotonic() > deadline:
                print(f"[recollect] {name} did not stop in {STOP_TIMEOUT_S:.0f}s; killing it", flush=True)
                _kill(proc)
            time.sleep(0.05)


def _wait_until_ready(url: str, children: dict[str, subprocess.Popen], signals: list[int]) -> str:
    """ "ready", "stopping" (a signal came first), "exited" (a child died) or the last health answer."""
    deadline = time.monotonic() + READY_TIMEOUT_S
    last = "no answer"
    while time.monotonic() < deadline:
        if signals:
            return "stopping"
        if any(proc.poll() is not None for proc in children.values()):
            return "exited"
        try:
            with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 (our own http:// URL)
                if response.status == 200:
                    return "ready"
        except urllib.error.HTTPError as error:
            last = error.read().decode(errors="replace")
        except (urllib.error.URLError, OSError) as error:
            last = str(error)
        time.sleep(0.2)
    return last


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


def _is_loopback(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m config.stack", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default=os.environ.get("RECOLLECT_HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("RECOLLECT_PORT", "8000")))
    parser.add_argument("--concurrency", type=int, default=None, help="Celery worker processes")
    args = parser.parse_args(argv)

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.dev")
    if not _is_loopback(args.host) and os.environ["DJANGO_SETTINGS_MODULE"].endswith(".dev"):
        parser.error(
            f"refusing to serve development settings (debug pages, a published secret key) on {args.host}; "
            "use 127.0.0.1, or run Daphne with config.settings.production as the README describes"
        )
    import django

    django.setup()  # starts or reuses the embedded servers; this process holds them until it exits
    from django.conf import settings
    from django.core.management import call_command

    from config.embedded import var_dir

    call_command("migrate", interactive=False, verbosity=1)
    _ensure_first_admin(var_dir())

    signals: list[int] = []

    def request_stop(signum: int, frame: object) -> None:
        signals.append(signum)
        if len(signals) == 2:
            print("[recollect] stopping now", flush=True)

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)

    concurrency = args.concurrency or settings.CELERY_WORKER_CONCURRENCY

    def worker(queue: str, processes: int) -> subprocess.Popen:
        argv = [sys.executable, "-m", "celery", "-A", "config", "worker", "--loglevel", "INFO"]
        argv += ["--queues", queue, "--concurrency", str(processes), "--hostname", f"{queue}-{args.port}@%h"]
        return _spawn(f"{queue} worker", argv)

    children = {
        # One process answers interactive work at once; bulk work gets the configured concurrency.
        "interactive worker": worker(INTERACTIVE_QUEUE, 1),
        "bulk worker": worker(BULK_QUEUE, concurrency),
        "daphne": _spawn(
            "daphne",
            [sys.executable, "-m", "daphne", "-b", args.host, "-p", str(args.port), "config.asgi:application"],
        ),
    }
    base_url = f"http://{args.host}:{args.port}"
    readiness = _wait_until_ready(f"{base_url}/api/health", children, signals)
    if readiness == "ready":
        print(
            f"[recollect] ready at {base_url}/  (chat {base_url}/chat/, admin {base_url}/admin/,"
            f" API docs {base_url}/api/docs/)."
            " Ctrl-C stops everything.",
            flush=True,
        )
    elif readiness not in ("stopping", "exited"):
        print(f"[recollect] not healthy after {READY_TIMEOUT_S:.0f}s; still running. Health said: {readiness}")
    exit_code = 0
    while not signals:
        failed = [name for name, proc in children.items() if proc.poll() is not None]
        if failed:
            print(f"[recollect] {', '.join(failed)} exited unexpectedly; stopping the rest", flush=True)
            exit_code = 1
            break
        time.sleep(0.2)
    print("[recollect] stopping ... (Ctrl-C again to stop at once)", flush=True)
    _stop(children, signals)
    print("[recollect] stopped.", flush=True)
    return exit_code


if __name__ == "__main__":
    sys.exit(main())
