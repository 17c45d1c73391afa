"""Runs everything Recollect needs on one machine: ``python -m config.stack`` (``make run``).

It starts (or reuses) the database and Redis, applies migrations, then runs two Celery workers (one
for interactive work, one for bulk work such as indexing), Celery's beat scheduler (the periodic jobs,
as in production) and WEB_PROCESSES Daphne processes (HTTP and
websockets) as child processes until Ctrl-C or SIGTERM, and stops them all. The Daphne processes share
one listening socket, opened here and handed to each: the kernel gives each new connection to a process
waiting for one, so a process busy preparing turns takes no more while another is free, and one that
restarts leaves the port open to the others. Each also listens on a Unix socket of its own, where its
health is asked.
The children run in their own process groups, so a terminal's Ctrl-C reaches this supervisor only and
each child gets exactly one orderly SIGTERM; they also die with the supervisor if it is killed.

Until then it keeps the site up: a child that dies (killed, out of memory, crashed) is started again
after a pause that doubles with each quick failure, while the others keep running; an embedded server
that dies is started again in place (same socket, same port), so every process reconnects to it by
itself (the scheduler it runs queues again a document whose indexing worker died, once its claim has gone
stale); and a Daphne that is alive but useless (its health check unanswered, or saying it cannot get a database
connection, for HEALTH_RESTART_AFTER_S) is stopped and started again. A database that is down is not
Daphne's fault: a restart would not bring it back, so that alone restarts nothing.

Why this is not honcho or supervisor (one stops everything when a process exits, the other gives up on
a program that fails to start a few times and restarts on a health check's first bad answer): the
README, "How it is built".
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import ipaddress
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

from django.conf import settings

from config import accepting, embedded
from config.webcheck import web_ready, web_trouble
from foundation.celery import BULK_QUEUE, INTERACTIVE_QUEUE

STOP_TIMEOUT_S = 20.0
ASGI_THREADS = 32
# Daphne's default (5 s) drops a websocket handshake that waits behind a burst of work.
WEBSOCKET_CONNECT_TIMEOUT_S = 20
READY_TIMEOUT_S = 60.0
# A child that dies is started again after RESTART_DELAY_S, doubled for each further death within
# RESTART_STABLE_S of its start (a crash loop), up to RESTART_MAX_DELAY_S.
RESTART_DELAY_S = 1.0
RESTART_MAX_DELAY_S = 60.0
RESTART_STABLE_S = 30.0
# How often the embedded servers are checked.
SERVERS_CHECK_S = 1.0
# How often the supervisor looks at its children, the servers and the stop signals.
SUPERVISE_TICK_S = 0.2
# How often a running Daphne's health is asked, and how long an answer may take.
HEALTH_CHECK_INTERVAL_S = 5.0
HEALTH_ANSWER_TIMEOUT_S = 3.0
# Connections waiting to be taken by a web process: a burst of users connecting at once waits, not refused.
LISTEN_BACKLOG = 1024
HEALTH_PATH = "/api/health"


def _die_with_parent() -> None:
    # Linux PR_SET_PDEATHSIG: if the supervisor is SIGKILLed, the kernel sends its children SIGTERM.
    with contextlib.suppress(OSError):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)


def _spawn(
    name: str, argv: list[str], pass_fds: tuple[int, ...] = (), env: dict[str, str] | None = None
) -> subprocess.Popen:
    print(f"[recollect] starting {name}: {' '.join(argv[1:])}", flush=True)
    environment = {**os.environ, **env} if env else None
    return subprocess.Popen(
        argv, start_new_session=True, preexec_fn=_die_with_parent, pass_fds=pass_fds, env=environment
    )


def _kill(proc: subprocess.Popen) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)


class _Child:
    """One supervised process, and the state of its restarts."""

    def __init__(
        self,
        name: str,
        argv: list[str],
        *,
        pass_fds: tuple[int, ...] = (),
        health: str = "",
        env: dict[str, str] | None = None,
    ) -> None:
        self.name, self.argv, self.pass_fds, self.env = name, argv, pass_fds, env
        self.health = health  # a web process's own Unix socket, where its health is asked
        self.proc = _spawn(name, argv, pass_fds, env)
        self.started = time.monotonic()
        self.restarts = 0
        self.quick_failures = 0
        self.restart_at: float | None = None
        self.kill_at: float | None = None

    def terminate(self, now: float) -> None:
        """Asks the process to stop (it is started again once it has); kills it if it will not."""
        if self.restart_at is None and self.kill_at is None:
            self.proc.send_signal(signal.SIGTERM)
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.proc.pid, signal.SIGCONT)  # a frozen (stopped) process must run to stop
            self.kill_at = now + STOP_TIMEOUT_S

    def check(self, now: float) -> None:
        """Notices a death and schedules the restart; performs a restart that is due."""
        if self.restart_at is None:
            code = self.proc.poll()
            if code is None:
                if self.kill_at is not None and now > self.kill_at:
                    print(f"[recollect] {self.name} did not stop in {STOP_TIMEOUT_S:.0f}s; killing it", flush=True)
                    _kill(self.proc)
                return
            self.kill_at = None
            # What the dead process left behind (a Celery worker's pool processes) goes with it: they can
            # no longer report to anyone, and the restarted worker starts its own.
            _kill(self.proc)
            self.quick_failures = self.quick_failures + 1 if now - self.started < RESTART_STABLE_S else 1
            delay = min(RESTART_MAX_DELAY_S, RESTART_DELAY_S * 2 ** (self.quick_failures - 1))
            self.restarts += 1
            self.restart_at = now + delay
            print(f"[recollect] {self.name} exited (code {code}); restart #{self.restarts} in {delay:.0f}s", flush=True)
        elif now >= self.restart_at:
            self.restart_at = None
            self.proc = _spawn(self.name, self.argv, self.pass_fds, self.env)
            self.started = now


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


def _health(url: str) -> str:
    """ "ready", or what the health check said instead."""
    try:
        with urllib.request.urlopen(url, timeout=2) as response:  # noqa: S310 (our own http:// URL)
            if response.status == 200:
                return "ready"
    except urllib.error.HTTPError as error:
        return error.read().decode(errors="replace")
    except (urllib.error.URLError, OSError) as error:
        return str(error)
    return "no answer"


class _HealthWatch:
    """Restarts a Daphne that has been in trouble (``config.webcheck``) for ``restart_after`` seconds."""

    def __init__(self, url: str, restart_after: float, *, unix_socket: str | None = None) -> None:
        self.url, self.restart_after, self.unix_socket = url, restart_after, unix_socket
        self.checked = 0.0
        self.trouble_since: float | None = None
        self.up_since_start: float | None = None  # the start of Daphne after which it last answered well

    def check(self, now: float, daphne: _Child) -> None:
        if self.restart_after <= 0 or now - self.checked < HEALTH_CHECK_INTERVAL_S:
            return
        self.checked = now
        if daphne.restart_at is not None or daphne.kill_at is not None:
            self.trouble_since = None
            return
        trouble = web_trouble(self.url, timeout=HEALTH_ANSWER_TIMEOUT_S, unix_socket=self.unix_socket)
        if trouble is None:
            self.trouble_since, self.up_since_start = None, daphne.started
            return
        if self.up_since_start != daphne.started and now - daphne.started < READY_TIMEOUT_S:
            return  # still starting
        self.trouble_since = self.trouble_since or now
        if now - self.trouble_since >= self.restart_after:
            print(
                f"[recollect] {daphne.name} is running but {trouble}, for {now - self.trouble_since:.0f}s;"
                " restarting it",
                flush=True,
            )
            daphne.terminate(now)
            self.trouble_since = None


def _revive_servers() -> None:
    """Starts again, in place, an embedded server that died; a failure is retried on the next check."""
    try:
        for name in embedded.revive_held():
            print(f"[recollect] the embedded {name} had stopped; started it again", flush=True)
    except Exception as exc:  # e.g. a killed PostgreSQL whose old processes still hold its memory
        print(f"[recollect] could not restart an embedded server yet: {exc}", flush=True)


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
    args = _arguments(argv)
    import django

    django.setup()  # starts or reuses the embedded servers; this process holds them until it exits
    from django.core.management import call_command

    from foundation.connections import install_migration_limits

    install_migration_limits()
    call_command("migrate", interactive=False, verbosity=1)
    _ensure_first_admin(embedded.var_dir())
    signals = _stop_requests()
    listener = _listen(args.host, args.port)
    children = _children(
        listener,
        concurrency=args.concurrency or settings.CELERY_WORKER_CONCURRENCY,
        web_processes=args.web_processes or settings.WEB_PROCESSES,
    )
    _supervise(children, base_url=f"http://{args.host}:{args.port}", signals=signals)
    print("[recollect] stopping ... (Ctrl-C again to stop at once)", flush=True)
    _stop({child.name: child.proc for child in children if child.restart_at is None}, signals)
    print("[recollect] stopped.", flush=True)
    return 0


def _arguments(argv: list[str] | None) -> argparse.Namespace:
    """The command line, and the environment the stack runs in; refuses development settings on an open
    address."""
    parser = argparse.ArgumentParser(prog="python -m config.stack", description=__doc__.splitlines()[0])
    parser.add_argument("--host", default=os.environ.get("RECOLLECT_HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("RECOLLECT_PORT", "8000")))
    parser.add_argument("--concurrency", type=int, default=None, help="Celery worker processes")
    parser.add_argument("--web-processes", type=int, default=None, help="Daphne processes (WEB_PROCESSES)")
    args = parser.parse_args(argv)

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.dev")
    # Daphne's thread pool runs the sync views and the sockets' database work; its default (cores + 4)
    # queues a few dozen users' requests behind each other on a small machine.
    os.environ.setdefault("ASGI_THREADS", str(ASGI_THREADS))
    if not _is_loopback(args.host) and os.environ["DJANGO_SETTINGS_MODULE"].endswith(".dev"):
        parser.error(
            f"refusing to serve development settings (debug pages, a published secret key) on {args.host}; "
            "use 127.0.0.1, or run Daphne with config.settings.production as the README describes"
        )
    return args


def _stop_requests() -> list[int]:
    """The signals received so far (Ctrl-C, SIGTERM): one asks for an orderly stop, a second says so."""
    signals: list[int] = []

    def request_stop(signum: int, frame: object) -> None:
        signals.append(signum)
        if len(signals) == 2:
            print("[recollect] stopping now", flush=True)

    signal.signal(signal.SIGINT, request_stop)
    signal.signal(signal.SIGTERM, request_stop)
    return signals


def _listen(host: str, port: int) -> socket.socket:
    """The one listening socket every web process accepts from; kept open here while they come and go."""
    if ":" in host:
        raise SystemExit(f"python -m config.stack serves IPv4 addresses; {host} is IPv6 (put a proxy in front)")
    listener = socket.create_server((host, port), backlog=LISTEN_BACKLOG)
    listener.set_inheritable(True)
    return listener


def _children(listener: socket.socket, *, concurrency: int, web_processes: int) -> list[_Child]:
    """The two Celery workers, the scheduler of the periodic jobs, then the web processes (Daphne)."""
    port = listener.getsockname()[1]

    def worker(queue: str, processes: int, env: dict[str, str] | None = None) -> _Child:
        argv = [sys.executable, "-m", "celery", "-A", "config", "worker", "--loglevel", "INFO"]
        argv += ["--queues", queue, "--concurrency", str(processes), "--hostname", f"{queue}-{port}@%h"]
        return _Child(f"{queue} worker", argv, env=env)

    # Daphne's "fd" endpoint adopts IPv4 sockets only (its address family cannot be named on the command line).
    shared = f"fd:fileno={listener.fileno()}"

    def web(number: int) -> _Child:
        name = "daphne" if web_processes == 1 else f"daphne-{number}"
        own = embedded.var_dir() / "run" / f"web-{port}-{number}.sock"
        own.unlink(missing_ok=True)
        argv = [sys.executable, "-m", "daphne", "-e", shared, "-u", str(own)]
        argv += ["--websocket_connect_timeout", str(WEBSOCKET_CONNECT_TIMEOUT_S)]
        argv += ["--application-close-timeout", f"{settings.APPLICATION_CLOSE_TIMEOUT_S:g}", "config.asgi:application"]
        # Each takes its turn at the shared socket when others share it (config.accepting).
        env = {accepting.SHARED_BY_ENV: str(web_processes)}
        return _Child(name, argv, pass_fds=(listener.fileno(),), health=str(own), env=env)

    # One process answers interactive work at once; bulk work gets the configured concurrency.
    # One person's upload is indexed one document at a time while others wait (DOCUMENT_INDEX_PER_USER):
    # its model runs on every core, so that a large upload is not held to one.
    bulk_threads = {"EMBEDDING_THREADS": os.environ.get("EMBEDDING_THREADS") or str(os.cpu_count() or 1)}
    workers = [worker(INTERACTIVE_QUEUE, 1), worker(BULK_QUEUE, concurrency, bulk_threads)]
    # The periodic jobs (foundation.celery), as in production: one scheduler for the site.
    schedule = embedded.var_dir() / "run" / f"celerybeat-{port}"
    beat = _Child(
        "scheduler",
        [sys.executable, "-m", "celery", "-A", "config", "beat", "--loglevel", "INFO", "--schedule", str(schedule)],
    )
    return [*workers, beat, *(web(number) for number in range(1, web_processes + 1))]


def _supervise(children: list[_Child], *, base_url: str, signals: list[int]) -> None:
    """Keeps the children and the embedded servers up until a stop is asked for, and says once when the
    site is ready (and, after READY_TIMEOUT_S, that it is not yet)."""
    watches = [
        (child, _HealthWatch(HEALTH_PATH, settings.HEALTH_RESTART_AFTER_S, unix_socket=child.health))
        for child in children
        if child.health
    ]
    readiness = _Readiness(base_url, [child.health for child in children if child.health])
    servers_checked = time.monotonic()
    while not signals:
        now = time.monotonic()
        for child in children:
            child.check(now)
        if readiness.settled:
            for daphne, watch in watches:
                watch.check(now, daphne)
        if now - servers_checked >= SERVERS_CHECK_S:
            _revive_servers()
            servers_checked = now
        if not readiness.said_ready:
            readiness.check(now)
        time.sleep(SUPERVISE_TICK_S)


class _Readiness:
    """Says once that the site is ready: it answers well on its port, and each web process (asked on its
    own socket, ``web_sockets``) has warmed up, so that the first person after a start waits for nobody's
    model or indexes to load. Should that take more than READY_TIMEOUT_S, it says so, and still says
    "ready" when it comes. ``settled``: either said, when restarting a web process in trouble may begin."""

    def __init__(self, base_url: str, web_sockets: list[str]) -> None:
        self.base_url, self.web_sockets = base_url, web_sockets
        self.deadline = time.monotonic() + READY_TIMEOUT_S
        self.said_ready = self.said_late = False
        self.checked = 0.0

    @property
    def settled(self) -> bool:
        return self.said_ready or self.said_late

    def check(self, now: float) -> None:
        if self.said_late and now - self.checked < HEALTH_CHECK_INTERVAL_S:
            return  # late already: no need to ask five times a second
        self.checked = now
        readiness = _health(f"{self.base_url}{HEALTH_PATH}")
        if readiness == "ready" and not all(web_ready(HEALTH_PATH, unix_socket=path) for path in self.web_sockets):
            readiness = "a web process is still warming up"
        if readiness == "ready":
            base_url = self.base_url
            print(
                f"[recollect] ready at {base_url}/  (chat {base_url}/chat/, admin {base_url}/admin/,"
                f" dashboard {base_url}/admin/ops/,"
                f" API docs {base_url}/api/docs/)."
                " Ctrl-C stops everything.",
                flush=True,
            )
            self.said_ready = True
        elif now > self.deadline and not self.said_late:
            print(
                f"[recollect] not healthy after {READY_TIMEOUT_S:.0f}s; still running, and will say when it is."
                f" Health said: {readiness}",
                flush=True,
            )
            self.said_late = True


if __name__ == "__main__":
    sys.exit(main())
