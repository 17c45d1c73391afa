"""The ``viking://`` URIs of what this app owns: a user's resources, documents and the nodes of their
trees. Every one is built and parsed here, and nowhere else.

    viking://resources/users/{user_id}                                  the user's documents
    viking://resources/users/{user_id}/documents/{doc_id}               a document (its root node)
    .../documents/{doc_id}/section_001/section_002/chunk_0003           sections and chunks below it
"""

from __future__ import annotations

import re
import uuid
from dataclasses import dataclass

from foundation.uris import SCHEME, viking_uri

_UUID = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"
_RESOURCE = re.compile(rf"^{re.escape(SCHEME)}resources/users/(\d{{1,18}})(?:/documents(?:/({_UUID})(/[\w/]*)?)?)?/?$")
# viking: + "" + resources + users + {user} + documents + {doc}: a document's URI split on "/".
_DOCUMENT_PARTS = 7


def user_root_uri(user_id: int) -> str:
    return viking_uri("resources", "users", user_id)


def document_uri(user_id: int, doc_id: uuid.UUID | str) -> str:
    return viking_uri("resources", "users", user_id, "documents", doc_id)


def section_uri(parent_uri: str, number: int) -> str:
    return f"{parent_uri}/section_{number:03d}"


def chunk_uri(parent_uri: str, number: int) -> str:
    return f"{parent_uri}/chunk_{number:04d}"


@dataclass(frozen=True)
class ResourceUri:
    """A parsed resource URI: whose it is, and the document it names (None for the user's root)."""

    uri: str
    user_id: int
    doc_id: uuid.UUID | None


def parse_resource_uri(uri: str) -> ResourceUri | None:
    """The parts of a resource URI, normalised (any spelling of the document id names the same
    document); None if ``uri`` is not one."""
    match = _RESOURCE.match((uri or "").strip()) if isinstance(uri, str) else None
    if not match:
        return None
    normal = uri.strip().rstrip("/")
    if not match.group(2):
        return ResourceUri(uri=normal, user_id=int(match.group(1)), doc_id=None)
    doc_id = uuid.UUID(match.group(2))
    return ResourceUri(uri=normal.replace(match.group(2), str(doc_id), 1), user_id=int(match.group(1)), doc_id=doc_id)


def doc_id_of(value: object) -> str | None:
    """A document id, or a URI ending in one, as the canonical id; None for anything else."""
    try:
        return str(uuid.UUID(str(value).rstrip("/").rsplit("/", 1)[-1]))
    except ValueError:
        return None


def names_a_document(uri: str) -> bool:
    """Whether ``uri`` is a document or a part of one (rather than a user's whole library)."""
    parsed = parse_resource_uri(uri)
    return parsed is not None and parsed.doc_id is not None


def directory_ancestors(uri: str) -> list[str]:
    """The directory URIs above a node, from its document down to its parent."""
    parts = uri.split("/")
    return ["/".join(parts[:depth]) for depth in range(_DOCUMENT_PARTS, len(parts))]
