"""Checks of the servers the product depends on, for the health endpoint and the run command."""

from __future__ import annotations

import json
import time
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.migrations.executor import MigrationExecutor

from config.celery import QUEUES, SENT_AT_HEADER, app

# kombu's Redis transport keeps a queue as a list (new messages pushed on the left, taken from the
# right), plus one list per priority step named with this separator; messages taken but not yet
# acknowledged wait in a hash.
_PRIORITY_SEPARATOR, _PRIORITY_STEPS = "\x06\x16", (3, 6, 9)
_UNACKED_KEY = "unacked"
# A task waiting longer than this (seconds) is reported as a backlog, per queue: a person waits for
# interactive work; bulk work (indexing a large upload) may queue for a while.
QUEUE_WAIT_WARNING_S = {"interactive": 60.0, "bulk": 900.0}

_pending_cache: dict[str, float] = {}


def _pending_migrations() -> int:
    """Migrations not yet applied; loading every migration file costs ~0.1 s, so at most once a minute."""
    if _pending_cache.get("at", 0.0) < time.monotonic() - 60 or _pending_cache.get("count"):
        executor = MigrationExecutor(connection)
        _pending_cache.update(
            count=len(executor.migration_plan(executor.loader.graph.leaf_nodes())), at=time.monotonic()
        )
    return int(_pending_cache["count"])


def vector_column_sizes() -> dict[str, int]:
    """The size of every ``vector(n)`` column in the database, by ``table.column``."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT c.relname || '.' || a.attname, a.atttypmod FROM pg_attribute a"
            " JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace"
            " WHERE a.atttypid = 'vector'::regtype AND c.relkind = 'r' AND n.nspname = current_schema()"
            " AND NOT a.attisdropped"
        )
        return dict(cursor.fetchall())


def database_status() -> dict[str, Any]:
    started = time.perf_counter()
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT current_setting('server_version')")
            server_version = cursor.fetchone()[0]
            cursor.execute("SELECT extversion FROM pg_extension WHERE extname = 'vector'")
            row = cursor.fetchone()
        pending = _pending_migrations()
        sizes = vector_column_sizes() if row else {}
    except DatabaseError as exc:
        return {"ok": False, "error": str(exc).strip()}
    configured = settings.EMBEDDING_DIMENSIONS
    # Columns made for another EMBEDDING_DIMENSIONS cannot store this model's vectors.
    mismatched = sorted(column for column, size in sizes.items() if size != configured)
    report: dict[str, Any] = {
        "ok": row is not None and pending == 0 and not mismatched,
        "postgresql": server_version,
        "pgvector": row[0] if row else None,
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


def redis_status() -> dict[str, Any]:
    import redis

    started = time.perf_counter()
    try:
        client = redis.Redis.from_url(settings.REDIS_URL, socket_timeout=2, socket_connect_timeout=2)
        info = client.info("server")
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
    """The workers, their queues, and in words what is wrong with them: ``{workers, queues, problems}``."""
    workers = worker_status()
    queues = queue_status(consumers=workers.get("consumers"))
    problems = list(queues.get("problems", []))
    if workers.get("error"):
        problems.insert(0, f"the workers cannot be asked: {workers['error']}")
    return {"workers": workers, "queues": queues, "problems": problems}


def health_report(*, include_workers: bool = False) -> dict[str, Any]:
    report: dict[str, Any] = {"database": database_status(), "redis": redis_status()}
    if include_workers:
        report.update(workers_report())
    report["status"] = "ok" if all(part["ok"] for part in report.values() if isinstance(part, dict)) else "degraded"
    return report
