"""Shared set-up for benchmarks: Django on a database of their own on the same PostgreSQL server."""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def django_for_bench(database: str = "recollect_bench", *, fresh: bool = True) -> None:
    """Points Django at ``database`` (created empty when ``fresh``) on the configured or embedded server."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.dev")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import psycopg

    if os.environ.get("DATABASE_URL"):
        base = os.environ["DATABASE_URL"].rsplit("/", 1)[0]
    else:
        from config import embedded

        params = embedded.database_settings()
        base = f"postgresql://{params['USER']}@{quote(params['HOST'], safe='')}"
    if fresh:
        with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{database}"')
    os.environ["DATABASE_URL"] = f"{base}/{database}"
    import django

    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)


def percentiles(samples_ms: list[float]) -> dict[str, float]:
    ordered = sorted(samples_ms)
    return {
        "n": len(ordered),
        "p50": round(statistics.median(ordered), 2),
        "p95": round(ordered[max(0, int(len(ordered) * 0.95) - 1)], 2),
        "max": round(ordered[-1], 2),
    }


class Timer:
    def __enter__(self):
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc):
        self.ms = (time.perf_counter() - self.start) * 1000
