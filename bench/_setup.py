"""Shared set-up for benchmarks: Django on a database of their own on the same PostgreSQL server."""

from __future__ import annotations

import os
import signal
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


def django_for_bench(database: str = "recollect_bench", *, fresh: bool = True) -> None:
    """Points Django at ``database`` (created empty when ``fresh``) on the configured or embedded server."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.dev")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    # Measured as production runs: without the development settings' record of every query.
    os.environ.setdefault("DEBUG", "false")
    import psycopg

    if os.environ.get("DATABASE_URL"):
        base = os.environ["DATABASE_URL"].rsplit("/", 1)[0]
    else:
        from config import embedded

        params = embedded.database_settings()
        base = f"postgresql://{params['USER']}@{quote(params['HOST'], safe='')}"
    with psycopg.connect(f"{base}/postgres", autocommit=True) as conn:
        if fresh:
            conn.execute(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{database}"')
        elif not conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [database]).fetchone():
            # Reusing rows that were never loaded (or were dropped since) would only time out on connecting.
            raise SystemExit(f"No database {database!r} to reuse: run the bench once without reusing its rows.")
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


def stack_env(**extra: str) -> dict[str, str]:
    """The environment of the run command's stack on the bench's database and Redis (after
    ``django_for_bench``)."""
    from django.conf import settings

    params = settings.DATABASES["default"]
    return {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings.dev",
        "DATABASE_URL": f"postgresql://{params['USER']}@{quote(params['HOST'], safe='')}/{params['NAME']}",
        "REDIS_URL": settings.REDIS_URL,
        "LOG_LEVEL": "WARNING",
        "DEBUG": os.environ.get("DEBUG", "false"),
        **extra,
    }


def stack_start(*, port: int, env: dict[str, str], args: tuple[str, ...] = ()) -> subprocess.Popen:
    """``python -m config.stack`` on ``port`` (its own process group), once it answers its health check."""
    stack = subprocess.Popen(
        [sys.executable, "-m", "config.stack", "--port", str(port), *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    for _ in range(240):
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/health", timeout=2)
            return stack
        except OSError:
            if stack.poll() is not None:
                raise RuntimeError("the stack did not start") from None
            time.sleep(0.5)
    raise RuntimeError("the stack did not answer")


def stack_stop(stack: subprocess.Popen) -> None:
    os.killpg(stack.pid, signal.SIGTERM)
    stack.wait(timeout=60)
