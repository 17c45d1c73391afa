"""Errors of sessions and memory; mapped to HTTP in foundation.api."""

from foundation.exceptions import ConflictError, NotFoundError


class SessionNotFound(NotFoundError):
    code = "session_not_found"
    default_message = "No such session."


class MemoryNotFound(NotFoundError):
    code = "memory_not_found"
    default_message = "No such memory."


class ExchangeAlreadyCommitted(ConflictError):
    code = "already_committed"
    default_message = (
        "The last question and answer are already remembered in an archive, so they cannot be replaced; "
        "ask again instead."
    )
