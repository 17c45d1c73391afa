"""Reads of documents and their trees, always scoped to one owner."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from django.db.models import Q, QuerySet
from django.utils import timezone

from documents_app.exceptions import DocumentNotFound, InvalidUri, NodeNotFound
from documents_app.models import Document, DocumentNode
from documents_app.uris import doc_id_of, document_uri, parse_resource_uri, user_root_uri

LEVELS = ("L0", "L1", "L2")
# How a waiting document's wait is estimated. Each takes SECONDS_PER_DOCUMENT (its turn, claim and
# writes), plus its file's size at the rate the owner's (else anyone's) last documents were indexed, one
# after the other, within the last hour: a manual takes a hundred times what a note does. With no such
# history (a new site), at DEFAULT_BYTES_PER_SECOND, what 2 cores index of Markdown (`bench/ingest.py`).
RECENT_INDEXED = 20
RECENT_WINDOW_S = 3600
SECONDS_PER_DOCUMENT = 0.05
DEFAULT_BYTES_PER_SECOND = 10_000


def document_list(*, owner) -> QuerySet[Document]:
    return Document.objects.filter(owner=owner).order_by("-created_at")


def _seconds_per_byte(owner) -> float:
    """How long a byte of a file has recently taken to index, from the gaps between the last documents
    finished and their sizes."""
    since = timezone.now() - timezone.timedelta(seconds=RECENT_WINDOW_S)
    finished = Document.objects.filter(status=Document.Status.READY, indexed_at__gte=since)
    for scope in (finished.filter(owner=owner), finished):
        recent = sorted(scope.order_by("-indexed_at").values_list("indexed_at", "size_bytes")[:RECENT_INDEXED])
        if len(recent) >= 3:
            # The first one's indexing began before the span measured: the others' filled it.
            took = (recent[-1][0] - recent[0][0]).total_seconds() - SECONDS_PER_DOCUMENT * (len(recent) - 1)
            return max(took, 0.0) / max(sum(size for _, size in recent[1:]), 1)
    return 1 / DEFAULT_BYTES_PER_SECOND


def document_queue_places(*, owner, documents: Sequence[Document]) -> dict[Any, dict[str, float]]:
    """For each of ``documents`` still waiting to be indexed, its place in the owner's line (1: next) and
    the estimated wait in seconds until it is ready: the owner's documents are indexed one at a time,
    oldest first, while others wait. Three queries, however many documents."""
    waiting = {document.pk for document in documents if document.status == Document.Status.PENDING}
    if not waiting:
        return {}
    line = Document.objects.filter(owner=owner, status=Document.Status.PENDING).order_by("created_at", "pk")
    per_byte = _seconds_per_byte(owner)
    places, wait = {}, 0.0
    for place, (pk, size) in enumerate(line.values_list("pk", "size_bytes"), start=1):
        wait += SECONDS_PER_DOCUMENT + size * per_byte
        if pk in waiting:
            places[pk] = {"place": place, "estimated_wait_s": round(wait, 1)}
    return places


def document_get(*, owner, doc_id: uuid.UUID | str) -> Document:
    """The owner's document; another user's document is indistinguishable from a missing one."""
    try:
        return Document.objects.get(owner=owner, id=uuid.UUID(str(doc_id)))
    except (ValueError, Document.DoesNotExist) as exc:
        raise DocumentNotFound() from exc


def document_get_many(*, owner, doc_ids: Sequence[uuid.UUID | str]) -> list[Document]:
    """The owner's documents with these ids, in one query; DocumentNotFound if any is missing or
    another user's."""
    try:
        wanted = {uuid.UUID(str(doc_id)) for doc_id in doc_ids}
    except ValueError as exc:
        raise DocumentNotFound() from exc
    documents = list(Document.objects.filter(owner=owner, id__in=wanted))
    if len(documents) != len(wanted):
        raise DocumentNotFound()
    return documents


def document_root(*, document: Document) -> DocumentNode | None:
    return DocumentNode.objects.filter(document=document, level=0).defer("embedding").first()


def _parse_uri(owner, uri: str) -> tuple[str, uuid.UUID | None]:
    """Checks that ``uri`` is the owner's; returns it normalised and the document id it names, if any."""
    parsed = parse_resource_uri(uri)
    if parsed is None:
        raise InvalidUri(f"{uri!r} is not a viking:// URI under viking://resources/users/<your id>.")
    if parsed.user_id != owner.id:
        raise NodeNotFound()  # another user's resources look exactly like missing ones
    return parsed.uri, parsed.doc_id


def _entry(node: DocumentNode) -> dict[str, Any]:
    return {
        "uri": node.uri,
        "kind": node.kind,
        "title": node.title,
        "abstract": node.abstract,
        "is_directory": node.kind != "chunk",
        "position": node.position,
    }


def fs_ls(*, owner, uri: str, offset: int = 0, limit: int = 500) -> dict[str, Any]:
    """The children of a URI with their L0 abstracts: the user's documents under the user root, a
    document's or section's sections and chunks below them; ``offset``/``limit`` page through them."""
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
        return {
            "uri": f"{root}/documents" if uri.endswith("/documents") else root,
            "total": len(entries),
            "children": entries[offset : offset + limit],
        }
    if not DocumentNode.objects.filter(owner=owner, uri=uri).exists():
        raise NodeNotFound()
    children = (
        DocumentNode.objects.filter(owner=owner, parent_uri=uri).defer("embedding", "content").order_by("position")
    )
    return {
        "uri": uri,
        "total": children.count(),
        "children": [_entry(node) for node in children[offset : offset + limit]],
    }


def _full_text(owner, node: DocumentNode) -> str:
    """A directory's full text: its chunks in document order, each without the start it repeats from
    the chunk before, so the original text comes back exactly (sections separated by a blank line)."""
    rows = DocumentNode.objects.filter(owner=owner, document_id=node.document_id, uri__startswith=f"{node.uri}/")
    children: dict[str, list[tuple[int, str, str, str, int]]] = {}
    for uri, parent, position, kind, content, overlap in rows.values_list(
        "uri", "parent_uri", "position", "kind", "content", "overlap_chars"
    ):
        children.setdefault(parent, []).append((position, uri, kind, content, overlap))
    pieces: list[str] = []
    stack = [node.uri]
    while stack:  # depth-first in position order, without recursion
        uri = stack.pop()
        entries = sorted(children.get(uri, []))
        following = []
        text = ""
        for _position, child_uri, kind, content, overlap in entries:
            if kind == "chunk":
                text += content[overlap:] if text else content
            else:
                following.append(child_uri)
        if text:
            pieces.append(text)
        stack.extend(reversed(following))
    return "\n\n".join(pieces)


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
        text = _full_text(owner, node)
    return {"uri": uri, "level": level, "kind": node.kind, "title": node.title, "text": text}


def node_scope(*, owner, uri: str | None) -> tuple[str, QuerySet[DocumentNode]]:
    """The owner's nodes at and below ``uri`` (the user root when empty), for scoped searches.

    A malformed URI is an error; another user's, or one naming nothing, is "not found".
    """
    nodes = DocumentNode.objects.filter(owner=owner)
    if not uri:
        return user_root_uri(owner.id), nodes
    uri, doc_id = _parse_uri(owner, uri)
    if doc_id is None:
        return uri, nodes
    if not nodes.filter(uri=uri).exists():
        if uri == document_uri(owner.id, doc_id) and Document.objects.filter(owner=owner, id=doc_id).exists():
            return uri, nodes.none()  # not indexed yet: nothing to find, but not an error
        raise NodeNotFound()
    return uri, nodes.filter(document_id=doc_id, uri__startswith=uri).filter(Q(uri=uri) | Q(uri__startswith=uri + "/"))


def titles_in_use(*, owner, doc_ids: list[str], section_uris: list[str]) -> tuple[dict[str, str], dict[str, str]]:
    """The titles a conversation can refer to its documents and sections by: ``{doc_id: title}`` and
    ``{section_uri: "<section> section of <document>"}`` (which says far more to a search than the
    section's own title), in one query. Unknown or foreign ids and URIs are left out."""
    wanted = {uuid.UUID(doc_id) for doc_id in map(doc_id_of, doc_ids) if doc_id}
    if not wanted and not section_uris:
        return {}, {}
    rows = (
        DocumentNode.objects.filter(owner=owner)
        .filter(Q(uri__in=section_uris) | Q(document_id__in=wanted, level=0))
        .values_list("uri", "title", "document_id", "document__title", "document__filename")
    )
    documents, sections = {}, {}
    for uri, title, doc_id, document_title, filename in rows:
        documents[str(doc_id)] = document_title or filename
        if uri in section_uris:
            sections[uri] = (title, str(doc_id))
    section_titles = {
        uri: f"{title} section of {documents[doc_id]}" if documents[doc_id] and title != documents[doc_id] else title
        for uri, (title, doc_id) in sections.items()
    }
    return documents, section_titles
