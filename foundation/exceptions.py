"""The kinds of domain error; each app's ``exceptions`` module subclasses one of them.

Services raise these; ``foundation.api.exception_handler`` is the one place that turns them into HTTP.
"""

from __future__ import annotations

from typing import Any

import psycopg
from django.db import DatabaseError, Error, InterfaceError, OperationalError
from psycopg.errors import QueryCanceled
from psycopg_pool import PoolTimeout, TooManyRequests

# The failures that mean "the database is unreachable (or every connection is busy)", not "this
# request is wrong": answered with a 503 and Retry-After, on every transport.
DATABASE_DOWN = (OperationalError, InterfaceError, PoolTimeout)
DATABASE_DOWN_MESSAGE = "The database is unavailable; retry in a few seconds."


def is_statement_cancelled(exc: BaseException) -> bool:
    """A statement stopped by its time limit (DATABASE_STATEMENT_TIMEOUT_S) or cancelled because its
    request was abandoned: the database is fine, this request took too long."""
    return isinstance(exc, QueryCanceled) or isinstance(exc.__cause__, QueryCanceled)


def is_database_down(exc: BaseException) -> bool:
    if is_statement_cancelled(exc):
        return False
    return isinstance(exc, DATABASE_DOWN) or (
        isinstance(exc, DatabaseError) and isinstance(exc.__cause__, DATABASE_DOWN)
    )


def connection_lost(exc: BaseException) -> bool:
    """Whether a database error means the connection itself went (the server restarted or ended it, the
    network dropped it), so that the same work may succeed on another; a failed statement, bad data or
    a pool with nothing to give does not."""
    cause = exc.__cause__ if isinstance(exc, Error) else exc
    if not isinstance(cause, psycopg.Error) or isinstance(cause, PoolTimeout | TooManyRequests):
        return False
    state = cause.sqlstate
    if state is None:  # found by the client: the connection closed or broken under it
        return isinstance(cause, psycopg.OperationalError | psycopg.InterfaceError)
    # 08: connection exceptions; 57P: the server shutting down or ending the session (57014, a
    # cancelled statement, is not one).
    return state.startswith(("08", "57P"))


class DomainError(Exception):
    """An error a client can act on. ``code`` is stable and machine-readable."""

    code = "error"
    default_message = "The request could not be completed."

    def __init__(self, message: str | None = None, *, details: dict[str, Any] | None = None) -> None:
        self.message = message or self.default_message
        self.details = details or {}
        super().__init__(self.message)


class NotFoundError(DomainError):
    """The object does not exist, or belongs to someone else (the two are indistinguishable)."""

    code = "not_found"
    default_message = "Not found."


class InvalidInputError(DomainError):
    """The request is well-formed JSON but its values are not acceptable."""

    code = "invalid"
    default_message = "Invalid input."


class ConflictError(DomainError):
    """The request clashes with the current state of the object."""

    code = "conflict"
    default_message = "The request conflicts with the current state."


class TooLargeError(DomainError):
    """The request carries more than the configured limits allow."""

    code = "too_large"
    default_message = "The request is too large."


class UnavailableError(DomainError):
    """A dependency the request needs is down; retrying later may succeed."""

    code = "unavailable"
    default_message = "A required service is unavailable."


class RequestStoppedError(DomainError):
    """The request ran past its time limit (or its client left) and was stopped; retrying may succeed."""

    code = "timeout"
    default_message = "The request took too long and was stopped; retry it."
