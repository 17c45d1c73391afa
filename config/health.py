"""Checks of the servers the product depends on, for the health endpoint and the run command."""

from __future__ import annotations

import time
from typing import Any

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.migrations.executor import MigrationExecutor

from config.celery import app

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


def worker_status(timeout: float = 1.0) -> dict[str, Any]:

    try:
        replies = app.control.ping(timeout=timeout)
    except Exception as exc:  # broker errors surface as several kombu/redis types
        return {"ok": False, "error": str(exc), "count": 0}
    names = sorted(name for reply in replies for name in reply)
    return {"ok": bool(names), "count": len(names), "names": names}


def health_report(*, include_workers: bool = False) -> dict[str, Any]:
    report: dict[str, Any] = {"database": database_status(), "redis": redis_status()}
    if include_workers:
        report["workers"] = worker_status()
    report["status"] = "ok" if all(part["ok"] for part in report.values()) else "degraded"
    return report
