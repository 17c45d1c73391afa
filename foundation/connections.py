"""The database connections of a web process: whatever ends a request, its connections go back to the
pool; no request keeps a connection past its time limit or queries after its client has gone; a connection whose thread
died holding it is handed back by the next check; and the pool's state can be reported.

Why this is needed: Django's ASGI handler runs a request's sync code (middleware and view) on a thread of
its own and hands that thread's connections back from ``request_finished``, a call queued on the same
thread. When the client leaves, Django cancels the request and queues that call behind the still-running
view; when Daphne then kills the application instance (``--application-close-timeout``), the queued call
is cancelled before it runs. The view finishes later, its thread exits, and the psycopg pool still counts
the connection as checked out: after a few such requests the pool is empty for good.
"""

from __future__ import annotations

import contextvars
import logging
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import DEFAULT_DB_ALIAS, connections
from django.db.backends.signals import connection_created
from django.db.models.signals import post_migrate, pre_migrate
from psycopg.pq import TransactionStatus

from foundation.exceptions import RequestStoppedError

logger = logging.getLogger(__name__)

# How long a cancellation of an abandoned request's statement may take to reach PostgreSQL.
CANCEL_TIMEOUT_S = 2.0


@dataclass
class RequestState:
    """One HTTP request as its own thread sees it."""

    thread_id: int | None = None
    client_gone: bool = False
    ended: bool = False
    response_started: bool = False

    def bind_thread(self) -> None:
        """Runs first on the request's own thread (the initializer of its executor)."""
        self.thread_id = threading.get_ident()

    def stop_reason(self, conn: Any) -> str | None:
        """Why this request may not query any further on ``conn``, if it may not."""
        if self.client_gone or self.ended:
            return "The client left before the response was ready; the request was stopped."
        checkout = _held.get(id(conn))
        limit = settings.REQUEST_CONNECTION_TIMEOUT_S
        if not self.response_started and checkout is not None and time.monotonic() - checkout.since > limit:
            return f"The request kept a database connection for longer than {limit:g} s and was stopped; retry it."
        return None


current_request: contextvars.ContextVar[RequestState | None] = contextvars.ContextVar("recollect_request", default=None)


def guard_query(execute, sql, params, many, context):
    """A query of a request that has kept its connection too long, or whose client has gone, is refused
    before it runs, so that the request ends and its connection goes back. Other threads of the request (a chat turn's
    own threads, which record a partial answer) and websockets are not concerned."""
    state = current_request.get()
    if state is not None and state.thread_id == threading.get_ident():
        reason = state.stop_reason(context["connection"].connection)
        if reason:
            raise RequestStoppedError(reason)
    return execute(sql, params, many, context)


@dataclass
class _Checkout:
    wrapper: Any
    conn: Any
    thread: threading.Thread
    since: float = field(default_factory=time.monotonic)

    def returned(self) -> bool:
        return self.wrapper.connection is not self.conn


_held: dict[int, _Checkout] = {}
_held_lock = threading.Lock()
_reclaimed_total = 0


def _on_connection_created(sender, connection, **kwargs) -> None:
    if connection.alias != DEFAULT_DB_ALIAS or connection.pool is None:
        return
    if guard_query not in connection.execute_wrappers:
        connection.execute_wrappers.append(guard_query)
    here = threading.current_thread()
    checkout = _Checkout(connection, connection.connection, here)
    with _held_lock:
        earlier = _held.get(id(connection.connection))
        _held[id(connection.connection)] = checkout
    if earlier is not None and earlier.thread is not here and earlier.thread.is_alive() and not earlier.returned():
        # Django hands a connection back before it lets go of it, so a thread waiting for one can get it
        # a moment before its last holder has let go: only one still held a moment later is shared.
        timer = threading.Timer(SHARED_CHECK_AFTER_S, _report_if_shared, args=(earlier, checkout))
        timer.daemon = True
        timer.start()
    reclaim_orphans()


# How long after a thread gets a connection its previous holder may still be letting go of it.
SHARED_CHECK_AFTER_S = 1.0


def _report_if_shared(earlier: _Checkout, later: _Checkout) -> None:
    if earlier.thread.is_alive() and not earlier.returned() and not later.returned():
        # Two threads on one connection interleave their statements and transactions: said loudly, with
        # both names, since the harm (a closed connection, a 500) shows up later and elsewhere.
        logger.error(
            "the pool handed thread %s a database connection that thread %s still holds",
            later.thread.name,
            earlier.thread.name,
        )


def reclaim_orphans() -> int:
    """Hands back to the pool every connection whose thread ended without returning it; returns how many."""
    global _reclaimed_total
    orphans, busy = [], []
    with _held_lock:
        for key, checkout in list(_held.items()):
            if checkout.returned():
                del _held[key]
            elif not checkout.thread.is_alive():
                del _held[key]
                # A statement running on it means a live thread uses it, whatever this record says: handing
                # it back would let the pool close it under that thread, or give it to a third. (Between
                # two statements nothing tells such a connection from an orphan.)
                running = checkout.conn.info.transaction_status == TransactionStatus.ACTIVE
                (busy if running else orphans).append(checkout)
    for checkout in busy:
        logger.error(
            "left a database connection alone: thread %s ended holding it, but a statement is running on it",
            checkout.thread.name,
        )
    for checkout in orphans:
        # The thread is gone, so nothing else can touch its wrapper or this connection any more.
        checkout.wrapper.connection = None
        try:
            checkout.conn._pool.putconn(checkout.conn)
        except Exception:
            logger.exception("a database connection left by a finished thread could not be handed back")
            continue
        logger.warning("handed back a database connection that thread %s ended holding", checkout.thread.name)
    with _held_lock:
        _reclaimed_total += len(orphans)
    return len(orphans)


def held_for() -> list[float]:
    """How long (seconds) each connection now checked out of this process's pool has been out."""
    now = time.monotonic()
    with _held_lock:
        return sorted((now - checkout.since for checkout in _held.values() if not checkout.returned()), reverse=True)


def held_by(thread_id: int | None) -> list[Any]:
    """The connections a thread holds now."""
    if thread_id is None:
        return []
    with _held_lock:
        return [c.conn for c in _held.values() if c.thread.ident == thread_id and not c.returned()]


def cancel_statements(conns: list[Any]) -> None:
    """Cancels the statement each connection is running (a lock wait, a slow query), so that a request
    whose client has gone hands its connection back now rather than when the statement ends."""
    for conn in conns:
        try:
            conn.cancel_safe(timeout=CANCEL_TIMEOUT_S)
        except Exception as exc:  # the connection may be broken or closing at the same moment
            logger.info("could not cancel an abandoned request's statement: %s", exc)


def release_database_connections() -> None:
    """Returns this thread's connections to the pool before a long wait (a model, the workers), so that
    waiting does not starve everyone else. (Not inside a transaction, which a caller may own.)"""
    for connection in connections.all(initialized_only=True):
        if not connection.in_atomic_block:
            _give_back(connection)


def hand_back() -> None:
    """Returns this thread's connections to the pool; runs as the last work of a request's thread, and of
    every thread that used the database on a request's behalf."""
    for connection in connections.all(initialized_only=True):
        try:
            _give_back(connection)
        except Exception:
            logger.exception("a database connection could not be handed back")


def _give_back(connection) -> None:
    """``connection.close()``, unless the pool has its connection already or another thread has taken it
    since (handed back by someone else): handing it back again would give one connection to two
    threads. The thread then only lets go of it, as closing would."""
    raw = connection.connection
    if raw is not None and getattr(connection, "pool", None) is not None:
        with _held_lock:
            record = _held.get(id(raw))
        if getattr(raw, "_pool", None) is None or (record is not None and record.wrapper is not connection):
            logger.error("a database connection this thread held was taken back by the pool meanwhile")
            connection.run_on_commit = []
            if connection.in_atomic_block:  # what is left of the transaction fails, as after close()
                connection.closed_in_transaction = True
                connection.needs_rollback = True
            connection.connection = None
            return
    connection.close()


def pool_status() -> dict[str, Any]:
    """Whether this process can get a database connection: its pool's size, what is in use, the requests
    waiting, how long the oldest checkout has been out; first hands back any connection a dead thread held."""
    reclaim_orphans()
    pool = connections[DEFAULT_DB_ALIAS].pool
    if pool is None:
        return {"ok": True, "pooled": False}
    if pool.closed:  # opened by the first request that needs the database
        return {"ok": True, "max_size": pool.max_size, "open": 0, "in_use": 0, "waiting": 0, "oldest_held_s": None}
    stats = pool.get_stats()
    size, available = stats.get("pool_size", 0), stats.get("pool_available", 0)
    ages = held_for()
    oldest = ages[0] if ages else None
    limit = settings.DATABASE_CONNECTION_MAX_HOLD_S
    exhausted = size >= pool.max_size and available == 0
    stuck = exhausted and oldest is not None and oldest > limit
    report: dict[str, Any] = {
        "ok": not stuck,
        "max_size": pool.max_size,
        "open": size,
        "in_use": size - available,
        "waiting": stats.get("requests_waiting", 0),
        "oldest_held_s": None if oldest is None else round(oldest, 1),
        "reclaimed": _reclaimed_total,
    }
    if stuck:
        report["error"] = (
            f"every one of this process's {pool.max_size} database connections is in use, one of them for "
            f"{oldest:.0f} s (more than DATABASE_CONNECTION_MAX_HOLD_S={limit:g}): this process cannot get a "
            "connection, though the database may be fine; restarting the web server frees them"
        )
    return report


def _lift_statement_timeout(sender, using: str = DEFAULT_DB_ALIAS, **kwargs) -> None:
    # Building an index over a large table may take longer than any request should.
    with connections[using].cursor() as cursor:
        cursor.execute("SET statement_timeout = 0")


def _restore_statement_timeout(sender, using: str = DEFAULT_DB_ALIAS, **kwargs) -> None:
    with connections[using].cursor() as cursor:
        cursor.execute("RESET statement_timeout")


def install() -> None:
    """Tracks and guards every connection this process checks out; called by the ASGI entry point."""
    connection_created.connect(_on_connection_created, dispatch_uid="recollect-connections")


def install_migration_limits() -> None:
    """Migrations run without the statement time limit (connected once, by the app registry's ready)."""
    pre_migrate.connect(_lift_statement_timeout, dispatch_uid="recollect-migrate-no-statement-timeout")
    post_migrate.connect(_restore_statement_timeout, dispatch_uid="recollect-migrate-statement-timeout")
