"""Database connections around long waits."""

from __future__ import annotations

from django.db import connections


def release_database_connections() -> None:
    """Returns this thread's connections to the pool before a long wait on a model, so that waiting
    turns do not starve everyone else. (Not inside a transaction, which a caller may own.)"""
    for connection in connections.all(initialized_only=True):
        if not connection.in_atomic_block:
            connection.close()
