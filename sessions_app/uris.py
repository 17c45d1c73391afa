"""The ``viking://`` URIs of what this app owns: sessions, their archives and messages, and memories.
Every one is built here, and nowhere else."""

from __future__ import annotations

from foundation.uris import uri_parts, viking_uri


def session_uri(session_id: object) -> str:
    return viking_uri("session", session_id)


def archive_uri(session_id: object, index: int) -> str:
    return viking_uri("session", session_id, "history", f"archive_{index:03d}")


def message_uri(session_id: object, message_id: object) -> str:
    return viking_uri("session", session_id, "messages", message_id)


def memory_uri(owner_id: object, category: str, memory_id: object) -> str:
    return viking_uri("user", owner_id, "memories", category, memory_id)


def message_ref_of(uri: str) -> tuple[str, int] | None:
    """(session id, message id) of a ``viking://session/{id}/messages/{message_id}`` URI."""
    parts = uri_parts(uri)
    if len(parts) == 4 and parts[0] == "session" and parts[2] == "messages" and parts[3].isdigit():
        return parts[1], int(parts[3])
    return None


def memory_id_of(uri: str) -> int | None:
    """The memory a ``viking://user/{owner}/memories/{category}/{id}`` URI names."""
    parts = uri_parts(uri)
    if len(parts) == 5 and parts[0] == "user" and parts[2] == "memories" and parts[4].isdigit():
        return int(parts[4])
    return None
