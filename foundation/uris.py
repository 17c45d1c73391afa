"""The ``viking://`` scheme every stored thing is addressed by. Each app builds and parses the URIs of
what it owns (``documents_app.uris``, ``sessions_app.uris``) with these two helpers, so the scheme is
spelled in one place."""

from __future__ import annotations

SCHEME = "viking://"


def viking_uri(*parts: object) -> str:
    """``viking://`` followed by ``parts`` joined with slashes."""
    return SCHEME + "/".join(str(part).strip("/") for part in parts)


def uri_parts(uri: str) -> list[str]:
    """The path segments of a ``viking://`` URI (empty for anything else)."""
    if not isinstance(uri, str) or not uri.startswith(SCHEME):
        return []
    return [part for part in uri[len(SCHEME) :].split("/") if part]
