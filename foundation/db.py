"""Database connections around long waits, reads run beside the caller's own, and filters reused in
statements written by hand."""

from __future__ import annotations

import contextvars
import time
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Generic, TypeVar

from django.conf import settings
from django.core.exceptions import EmptyResultSet, FullResultSet
from django.db import DEFAULT_DB_ALIAS, OperationalError, connection, connections
from django.db.models import QuerySet
from psycopg_pool import PoolTimeout

from foundation.connections import hand_back, release_database_connections

__all__ = ["Beside", "filter_sql", "read_beside", "release_database_connections", "where_sql"]

T = TypeVar("T")

# Reads run beside a request's own (see ``read_beside``), a few at once per process: each holds a
# pooled connection while it runs.
BESIDE_THREADS = 4
# A pool smaller than this keeps every read on its request's connection: a second one for a read beside
# would leave none for anyone else.
MIN_POOL_BESIDE = 4
_beside = ThreadPoolExecutor(max_workers=BESIDE_THREADS, thread_name_prefix="read-beside")


class Beside(Generic[T]):
    """A read started beside the caller's work (``read_beside``). ``result()`` waits for it, or runs it
    on the caller's thread when it never got a thread of its own; either way it raises what the read
    raised. ``ms`` is how long the read itself took, ``waited_ms`` how long ``result()`` waited for it."""

    def __init__(self, function: Callable[..., T], kwargs: dict[str, Any], future: Future | None) -> None:
        self._function, self._kwargs, self._future = function, kwargs, future
        self.ran_beside = future is not None
        self.ms = 0.0
        self.waited_ms = 0.0

    def result(self) -> T:
        started = time.perf_counter()
        if self._future is not None and self._future.cancel():
            self.ran_beside = False  # still queued behind other reads: quicker to run it here and now
        if self.ran_beside:
            value, self.ms = self._future.result()
            if value is not _NO_CONNECTION:
                self.waited_ms = round((time.perf_counter() - started) * 1000, 2)
                return value
            self.ran_beside = False  # the pool had nothing to spare by then: the caller's connection serves
        value = self._function(**self._kwargs)
        self.ms = round((time.perf_counter() - started) * 1000, 2)
        return value


# What a read beside answers when it got no connection in time: its caller runs it instead.
_NO_CONNECTION = object()


def _spare_connections() -> int:
    """How many more connections this process's pool could hand out now without anyone waiting."""
    pool = connections[DEFAULT_DB_ALIAS].pool
    if pool is None or pool.closed:
        return 0
    stats = pool.get_stats()
    size = stats.get("pool_size", 0)
    return stats.get("pool_available", 0) + (pool.max_size - size) - stats.get("requests_waiting", 0)


def read_beside(function: Callable[..., T], /, **kwargs: Any) -> Beside[T]:
    """``function(**kwargs)``, a read that needs nothing the caller is about to do, started on a connection
    of its own so that its statements run while the caller's do: two searches of a turn take about
    as long as the longer, where one after the other they took the sum.

    It runs on the caller's thread instead (when ``result()`` is called) unless the process is quiet
    enough to spare the connection, at most half its pool in use, so that a busy process keeps its
    connections for other requests; and whenever the caller is inside a transaction, whose writes a
    second connection would not see. ``READ_BESIDE=false`` turns it off."""
    if not settings.READ_BESIDE or connection.in_atomic_block:
        return Beside(function, kwargs, None)
    pool = connections[DEFAULT_DB_ALIAS].pool
    if pool is None or pool.max_size < MIN_POOL_BESIDE or _spare_connections() < pool.max_size // 2:
        return Beside(function, kwargs, None)
    context = contextvars.copy_context()  # the caller's session and model-call accounting

    def run() -> tuple[object, float]:
        # The caller holds a connection and waits: should the pool have been drained since, the caller
        # runs the read on its own rather than wait for the pool's timeout.
        if _spare_connections() < 1:
            return _NO_CONNECTION, 0.0
        started = time.perf_counter()
        try:
            return context.run(function, **kwargs), round((time.perf_counter() - started) * 1000, 2)
        except OperationalError as exc:
            if isinstance(exc.__cause__, PoolTimeout):
                return _NO_CONNECTION, 0.0
            raise
        finally:
            hand_back()  # back to the pool

    return Beside(function, kwargs, _beside.submit(run))


def where_sql(queryset: QuerySet) -> tuple[str, list]:
    """``queryset``'s filter as SQL and its parameters (``TRUE`` when it has none, ``FALSE`` when nothing can
    pass it), naming its table as PostgreSQL knows it: for a statement written by hand on that table,
    where building the whole statement through the ORM would cost more than PostgreSQL takes to answer
    it. Only for filters on the table's own columns (a filter through a relation needs the join the ORM
    would add)."""
    query = queryset.query
    if sum(1 for count in query.alias_refcount.values() if count) > 1:
        raise ValueError("where_sql: the filter goes through a relation; its join would be missing")
    try:
        sql, params = query.where.as_sql(query.get_compiler(connection=connection), connection)
    except FullResultSet:
        return "TRUE", []
    except EmptyResultSet:
        return "FALSE", []
    return sql or "TRUE", list(params)


def filter_sql(queryset: QuerySet) -> tuple[str, list]:
    """``where_sql``, for any filter: one through a relation becomes a test of the row's primary key
    against the rows the ORM selects (with the join it needs), so that a statement written by hand
    never loses a filter, only, in that rarer case, the saving.

    Compiled once per queryset: a search asks it of the same scope for several statements. (A queryset's
    filter never changes once it is built; filtering again makes a new queryset, without this.)"""
    compiled = queryset.__dict__.get(_FILTER_SQL)
    if compiled is None:
        try:
            where, params = where_sql(queryset)
        except ValueError:
            meta = queryset.model._meta
            sql, params = queryset.order_by().values("pk").query.sql_with_params()
            column = f"{connection.ops.quote_name(meta.db_table)}.{connection.ops.quote_name(meta.pk.column)}"
            where = f"{column} IN ({sql})"
        compiled = queryset.__dict__[_FILTER_SQL] = (where, tuple(params))
    return compiled[0], list(compiled[1])


_FILTER_SQL = "_compiled_filter_sql"
