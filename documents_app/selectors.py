"""Reads of documents and their trees, always scoped to one owner."""

from __future__ import annotations

import re
import uuid
from typing import Any

from django.conf import settings
from django.db.models import QuerySet

from documents_app.exceptions import DocumentNotFound, InvalidUri, NodeNotFound
from documents_app.models import Document, DocumentNode, user_root_uri
from retrieval_app.ai.tokens import CHARS_PER_TOKEN

LEVELS = ("L0", "L1", "L2")
_URI = re.compile(r"^viking://resources/users/(\d+)(?:/documents(?:/([0-9a-fA-F-]{36})(/.*)?)?)?/?$")


def document_list(*, owner) -> QuerySet[Document]:
    return Document.objects.filter(owner=owner).order_by("-created_at")


def document_get(*, owner, doc_id: uuid.UUID | str) -> Document:
    """The owner's document; another user's document is indistinguishable from a missing one."""
    try:
        return Document.objects.get(owner=owner, id=uuid.UUID(str(doc_id)))
    except (ValueError, Document.DoesNotExist) as exc:
        raise DocumentNotFound() from exc


def document_root(*, document: Document) -> DocumentNode | None:
    return DocumentNode.objects.filter(document=document, level=0).defer("embedding").first()


def _parse_uri(owner, uri: str) -> tuple[str, uuid.UUID | None]:
    """Checks that ``uri`` is the owner's; returns it normalised and the document id it names, if any."""
    match = _URI.match((uri or "").strip())
    if not match:
        raise InvalidUri(f"{uri!r} is not a viking:// URI under viking://resources/users/<your id>.")
    if int(match.group(1)) != owner.id:
        raise NodeNotFound()  # another user's resources look exactly like missing ones
    return uri.strip().rstrip("/"), uuid.UUID(match.group(2)) if match.group(2) else None


def _entry(node: DocumentNode) -> dict[str, Any]:
    return {
        "uri": node.uri,
        "kind": node.kind,
        "title": node.title,
        "abstract": node.abstract,
        "is_directory": node.kind != "chunk",
        "position": node.position,
    }


def fs_ls(*, owner, uri: str) -> dict[str, Any]:
    """The children of a URI with their L0 abstracts: the user's documents under the user root, a
    document's or section's sections and chunks below them."""
    uri, doc_id = _parse_uri(owner, uri)
    if doc_id is None:
        root = user_root_uri(owner.id)
        nodes = (
            DocumentNode.objects.filter(owner=owner, level=0, document__status=Document.Status.READY)
            .defer("embedding", "content")
            .order_by("-document__created_at")
        )
        pending = Document.objects.filter(owner=owner).exclude(status=Document.Status.READY)
        entries = [_entry(node) for node in nodes] + [
            {
                "uri": d.uri,
                "kind": "document",
                "title": d.title or d.filename,
                "abstract": "",
                "is_directory": True,
                "status": d.status,
                "position": None,
            }
            for d in pending
        ]
        return {"uri": f"{root}/documents" if uri.endswith("/documents") else root, "children": entries}
    if not DocumentNode.objects.filter(owner=owner, uri=uri).exists():
        raise NodeNotFound()
    children = (
        DocumentNode.objects.filter(owner=owner, parent_uri=uri).defer("embedding", "content").order_by("position")
    )
    return {"uri": uri, "children": [_entry(node) for node in children]}


def _stitch(chunks: list[str]) -> str:
    """The chunks' text without the overlap each repeats from the one before (never longer than
    CHUNK_OVERLAP_TOKENS, so only that many characters are compared)."""
    longest = settings.CHUNK_OVERLAP_TOKENS * CHARS_PER_TOKEN + 8
    text = ""
    for chunk in chunks:
        start = min(len(text), len(chunk), longest)
        overlap = next((n for n in range(start, 0, -1) if text.endswith(chunk[:n])), 0)
        text += ("" if overlap else ("\n\n" if text else "")) + chunk[overlap:]
    return text


def fs_read(*, owner, uri: str, level: str = "L1") -> dict[str, Any]:
    """The text of a node at one tier: L0 abstract, L1 overview, L2 full text (a directory's full text
    is its chunks', stitched without their overlaps)."""
    if level not in LEVELS:
        raise InvalidUri(f"level must be one of {', '.join(LEVELS)}.")
    uri, doc_id = _parse_uri(owner, uri)
    if doc_id is None:
        raise InvalidUri("Read a document or a node below one; list the user root with fs/ls.")
    node = DocumentNode.objects.filter(owner=owner, uri=uri).defer("embedding").first()
    if node is None:
        raise NodeNotFound()
    if level == "L0":
        text = node.abstract
    elif level == "L1":
        text = node.overview
    elif node.kind == "chunk":
        text = node.content
    else:
        chunks = DocumentNode.objects.filter(owner=owner, kind="chunk", uri__startswith=f"{uri}/").order_by(
            "level", "position"
        )
        text = _stitch([c.content for c in sorted(chunks, key=lambda c: c.uri)])
    return {"uri": uri, "level": level, "kind": node.kind, "title": node.title, "text": text}
