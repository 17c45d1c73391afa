"""Checks of the servers the product depends on, for the health endpoint and the run command."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import psycopg
import redis
from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.migrations.loader import MigrationLoader

from foundation.celery import QUEUES, SENT_AT_HEADER, app
from foundation.connections import pool_status, release_database_connections
from foundation.warmup import warm_status

# kombu's Redis transport keeps a queue as a list (new messages pushed on the left, taken from the
# right), plus one list per priority step named with this separator; messages taken but not yet
# acknowledged wait in a hash.
_PRIORITY_SEPARATOR, _PRIORITY_STEPS = "\x06\x16", (3, 6, 9)
_UNACKED_KEY = "unacked"
# A task waiting longer than this (seconds) is reported as a backlog, per queue: a person waits for
# interactive work; bulk work (indexing a large upload) may queue for a while.
QUEUE_WAIT_WARNING_S = {"interactive": 60.0, "bulk": 900.0}

# The health check connects on its own, one check at a time per process, and a burst of checks shares
# one answer for FACTS_FRESH_S: a flood of checks never competes with people's requests for the pool,
# and a pool that people's requests have exhausted (or lost) does not hide whether the database answers.
HEALTH_CONNECT_TIMEOUT_S = 2
FACTS_FRESH_S = 1.0
FACTS_WAIT_S = HEALTH_CONNECT_TIMEOUT_S + 1.0
# Loading every migration file costs ~0.1 s: the list on disk is read once a minute at most.
MIGRATIONS_RELOAD_S = 60.0

_facts: dict[str, tuple[float, Any]] = {}
_facts_lock = threading.Lock()
_disk_migrations: dict[str, Any] = {}


def _connect_params() -> dict[str, Any]:
    """The site's own connection parameters (database, options, time limits), for a plain connection."""
    params = connections[DEFAULT_DB_ALIAS].get_connection_params()
    # Django's own cursor class and type adapters are of no use to these few plain queries.
    params.pop("cursor_factory", None)
    params.pop("context", None)
    params.update(autocommit=True, connect_timeout=HEALTH_CONNECT_TIMEOUT_S)
    return params


def _migrations_on_disk() -> tuple[set[tuple[str, str]], dict[tuple[str, str], list[tuple[str, str]]]]:
    """Every migration on disk, and what each squashed one replaces."""
    if _disk_migrations.get("at", 0.0) < time.monotonic() - MIGRATIONS_RELOAD_S:
        loader = MigrationLoader(None, ignore_no_migrations=True)
        replaces = {key: list(migration.replaces) for key, migration in loader.replacements.items()}
        _disk_migrations.update(nodes=set(loader.graph.nodes), replaces=replaces, at=time.monotonic())
    return _disk_migrations["nodes"], _disk_migrations["replaces"]


def _pending_migrations(cursor) -> int:
    """Migrations on disk not yet applied to the database."""
    cursor.execute("SELECT to_regclass('django_migrations') IS NOT NULL")
    recorded = cursor.fetchone()[0]
    applied = set(cursor.execute("SELECT app, name FROM django_migrations").fetchall()) if recorded else set()
    nodes, replaces = _migrations_on_disk()
    # A squashed migration counts as applied when everything it replaces is.
    return sum(1 for key in nodes if key not in applied and not (key in replaces and set(replaces[key]) <= applied))


_VECTOR_COLUMNS_SQL = (
    "SELECT c.relname || '.' || a.attname, a.atttypmod FROM pg_attribute a"
    " JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace"
    " WHERE a.atttypid = 'vector'::regtype AND c.relkind = 'r' AND n.nspname = current_schema()"
    " AND NOT a.attisdropped"
)


def _ask_database(params: dict[str, Any]) -> tuple[str, str | None, int, dict[str, int]]:
    with psycopg.connect(**params) as conn, conn.cursor() as cursor:
        cursor.execute("SELECT current_setting('server_version')")
        server_version = cursor.fetchone()[0]
        cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
        row = cursor.fetchone()
        pending = _pending_migrations(cursor)
        sizes = dict(cursor.execute(_VECTOR_COLUMNS_SQL).fetchall()) if row else {}
    return server_version, row[0] if row else None, pending, sizes


def _database_facts() -> tuple[str, str | None, int, dict[str, int]]:
    """The server's version, pgvector's, the pending migrations and the vector columns' sizes (or the
    error that prevented asking), as asked at most FACTS_FRESH_S ago. A check that finds another one
    asking waits for it at most FACTS_WAIT_S: a database that hangs (rather than refusing) holds one
    thread of the process, never every health check."""
    params = _connect_params()
    key = repr(sorted(params.items()))
    if not _facts_lock.acquire(timeout=FACTS_WAIT_S):
        raise psycopg.OperationalError(f"the database has not answered the health check for {FACTS_WAIT_S:g} s")
    try:
        at, facts = _facts.get(key, (-FACTS_FRESH_S, None))
        if at < time.monotonic() - FACTS_FRESH_S:
            try:
                facts = _ask_database(params)
            except psycopg.Error as exc:
                facts = exc
            _facts.clear()
            _facts[key] = (time.monotonic(), facts)
    finally:
        _facts_lock.release()
    if isinstance(facts, Exception):
        raise facts
    return facts


def database_status() -> dict[str, Any]:
    """Whether the database answers, with pgvector, every migration applied and vector columns that fit
    the embedding model: asked on the health check's own connections, never one of people's requests."""
    started = time.perf_counter()
    try:
        server_version, pgvector, pending, sizes = _database_facts()
    except psycopg.Error as exc:
        return {"ok": False, "error": str(exc).strip() or type(exc).__name__}
    configured = settings.EMBEDDING_DIMENSIONS
    # Columns made for another EMBEDDING_DIMENSIONS cannot store this model's vectors.
    mismatched = sorted(column for column, size in sizes.items() if size != configured)
    report: dict[str, Any] = {
        "ok": pgvector is not None and pending == 0 and not mismatched,
        "postgresql": server_version,
        "pgvector": pgvector,
        "pending_migrations": pending,
        "embedding_dimensions": configured,
        "latency_ms": round((time.perf_counter() - started) * 1000, 1),
    }
    if mismatched:
        report["error"] = (
            f"EMBEDDING_DIMENSIONS is {configured} but these vector columns have another size: "
            f"{', '.join(mismatched)}. Use the embedding model the database was created for, or re-create "
            "the vector columns for the new model."
        )
    return report


# One client per Redis URL for the checks, kept between them: a client made per check connected anew
# each time and read the library's version from its installed metadata, most of a check's cost, which a
# balancer asking every few seconds (or a burst of anonymous checks) paid in the web process's time.
_redis_clients: dict[str, redis.Redis] = {}
_redis_clients_lock = threading.Lock()


def _redis_client(url: str) -> redis.Redis:
    with _redis_clients_lock:
        client = _redis_clients.get(url)
        if client is None:
            # A burst of checks waits its turn for the few connections rather than opening one each.
            pool = redis.BlockingConnectionPool.from_url(
                url, max_connections=4, timeout=2, socket_timeout=2, socket_connect_timeout=2
            )
            client = _redis_clients[url] = redis.Redis(connection_pool=pool)
        return client


def redis_status() -> dict[str, Any]:
    started = time.perf_counter()
    try:
        # A connection that broke since the last check is dropped and made anew by the client itself.
        info = _redis_client(settings.REDIS_URL).info("server")
    except (redis.RedisError, OSError) as exc:
        return {"ok": False, "error": str(exc)}
    return {
        "ok": True,
        "version": info.get("redis_version"),
        "latency_ms": round((time.perf_counter() - started) * 1000, 1),
    }


def _oldest_sent_at(client, keys: list[str]) -> float | None:
    """When the oldest message among these lists was sent (its header), if any says."""
    oldest = None
    for key in keys:
        raw = client.lindex(key, -1)
        if raw is None:
            continue
        try:
            sent = float(json.loads(raw).get("headers", {}).get(SENT_AT_HEADER))
        except (TypeError, ValueError, AttributeError):
            continue  # a message from before the header existed, or not ours
        oldest = sent if oldest is None else min(oldest, sent)
    return oldest


def age_in_words(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


def queue_status(*, consumers: dict[str, list[str]] | None) -> dict[str, Any]:
    """Each worker queue's backlog in Redis (messages waiting, the oldest one's age), the workers
    consuming it (``consumers``: queue to worker names, None when the workers could not be asked), and
    in words what is wrong with it."""
    import redis

    try:
        client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)
        queues: dict[str, Any] = {}
        now = time.time()
        for queue in QUEUES:
            keys = [queue, *(f"{queue}{_PRIORITY_SEPARATOR}{step}" for step in _PRIORITY_STEPS)]
            waiting = sum(client.llen(key) for key in keys)
            sent = _oldest_sent_at(client, keys) if waiting else None
            queues[queue] = {"waiting": waiting, "oldest_age_s": round(now - sent, 1) if sent else None}
        in_progress = client.hlen(_UNACKED_KEY)
    except (redis.RedisError, OSError) as exc:
        return {"ok": False, "error": f"the broker cannot be read: {exc}", "problems": ["Redis cannot be reached."]}
    problems: list[str] = []
    for queue, state in queues.items():
        workers = None if consumers is None else consumers.get(queue, [])
        state["consumers"] = workers
        if workers == []:
            problems.append(f"no worker is consuming the {queue} queue")
        age = state["oldest_age_s"]
        if age is not None and age > QUEUE_WAIT_WARNING_S.get(queue, 300.0):
            problems.append(
                f"the oldest of {state['waiting']} tasks in the {queue} queue has waited {age_in_words(age)}"
            )
    return {"ok": not problems, "queues": queues, "in_progress": in_progress, "problems": problems}


def worker_status(timeout: float = 1.0) -> dict[str, Any]:
    """The workers that answer, and the queues each consumes."""
    try:
        replies = app.control.inspect(timeout=timeout).active_queues() or {}
    except Exception as exc:  # broker errors surface as several kombu/redis types
        return {"ok": False, "error": str(exc), "count": 0, "consumers": None}
    consumers: dict[str, list[str]] = {queue: [] for queue in QUEUES}
    for name, queues in replies.items():
        for queue in queues or []:
            consumers.setdefault(queue.get("name", ""), []).append(name)
    names = sorted(replies)
    return {
        "ok": all(consumers[queue] for queue in QUEUES),
        "count": len(names),
        "names": names,
        "consumers": {queue: sorted(workers) for queue, workers in consumers.items()},
    }


def workers_report() -> dict[str, Any]:
    """The workers, their queues, and in words what is wrong with them: ``{workers, queues, problems}``.
    Asking the workers takes up to a second: the caller's pooled connection goes back first (the health
    check, the operators' dashboard), so that a burst of these starves nobody else."""
    release_database_connections()
    workers = worker_status()
    queues = queue_status(consumers=workers.get("consumers"))
    problems = list(queues.get("problems", []))
    if workers.get("error"):
        problems.insert(0, f"the workers cannot be asked: {workers['error']}")
    return {"workers": workers, "queues": queues, "problems": problems}


_deep_cache: dict[str, Any] = {}
_deep_lock = threading.Lock()


def cached_workers_report() -> dict[str, Any]:
    """``workers_report()`` as checked at most HEALTH_DEEP_CACHE_S ago in this process: asking the workers
    takes about a second, and a burst of checks waits for one asking, never starts one each."""
    with _deep_lock:
        if _deep_cache.get("at", -float("inf")) < time.monotonic() - settings.HEALTH_DEEP_CACHE_S:
            _deep_cache.update(report=workers_report(), at=time.monotonic())
        return _deep_cache["report"]


def health_report(*, include_workers: bool = False, fresh: bool = True) -> dict[str, Any]:
    """The database (does it answer?), this process's connections (can it get one?), Redis, whether this
    process has warmed up since it started (until then it answers, more slowly: the status says
    "degraded", so that a balancer or the run command sends people elsewhere meanwhile), and with
    ``include_workers`` the workers and queues (``fresh``, or as checked a few seconds ago)."""
    report: dict[str, Any] = {
        "database": database_status(),
        "connections": pool_status(),
        "redis": redis_status(),
        "warm": warm_status(),
    }
    if include_workers:
        report.update(workers_report() if fresh else cached_workers_report())
    report["status"] = "ok" if all(part["ok"] for part in report.values() if isinstance(part, dict)) else "degraded"
    return report
