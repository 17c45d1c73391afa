"""Database connections around long waits."""

from __future__ import annotations

from foundation.connections import release_database_connections

__all__ = ["release_database_connections"]
