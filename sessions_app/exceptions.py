"""Errors of sessions and memory; mapped to HTTP in config.api."""

from config.exceptions import NotFoundError


class SessionNotFound(NotFoundError):
    code = "session_not_found"
    default_message = "No such session."


class MemoryNotFound(NotFoundError):
    code = "memory_not_found"
    default_message = "No such memory."
