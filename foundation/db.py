"""Database connections around long waits, and filters reused in statements written by hand."""

from __future__ import annotations

from django.core.exceptions import EmptyResultSet, FullResultSet
from django.db import connection
from django.db.models import QuerySet

from foundation.connections import release_database_connections

__all__ = ["release_database_connections", "where_sql"]


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
