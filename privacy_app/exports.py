"""A person's data as one zip: everything they own, readable without Recollect and importable into it.

The archive (format ``recollect-export``, version ``EXPORT_VERSION``)::

    manifest.json            format, version, created_at, source, embedding model, counts, sha256 per file
    sessions.jsonl           one session a line: title, agent, metadata, timestamps, rolling summary
    archives.jsonl           committed runs of a session: L0 abstract, L1 overview (text and fields)
    messages.jsonl           every turn: session, seq, role, content, metadata, created_at, its archive
    memories.jsonl           long-term memories with their history, the archive and turns they came from
    documents.jsonl          documents: title, file name, type, sha256, status, L0/L1 of the whole
    documents/<id>/<name>    each document's original file, byte for byte

Ids are the source server's own and stable: sessions and documents by UUID, archives by their
``viking://`` URI, messages and memories by number; references between records use them. Vectors
(optional, on by default) travel inline with the model that made them, so that an import into a server
with the same model reuses them instead of paying for them again.

The archive is written into a file (a temporary one for the API): rows are read in batches and each
member is streamed into the zip, so a large library never sits in memory whole. The reads share one
repeatable-read snapshot, so the counts in the manifest are the rows in the files.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import re
import zipfile
from collections import defaultdict
from collections.abc import Iterable, Iterator
from datetime import datetime
from pathlib import PurePosixPath
from typing import IO, Any

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from documents_app.models import Document, DocumentNode
from foundation import ai
from sessions_app.models import Archive, ChatSession, Memory, Message

EXPORT_FORMAT = "recollect-export"
EXPORT_VERSION = 1
MANIFEST_NAME = "manifest.json"
# Rows fetched from the database at a time, and bytes copied from a stored file at a time.
EXPORT_BATCH = 500
COPY_CHUNK_BYTES = 1024 * 1024
# The record files, in the order an import reads them (each refers only to those before it).
RECORD_FILES = {
    "sessions": "sessions.jsonl",
    "archives": "archives.jsonl",
    "messages": "messages.jsonl",
    "memories": "memories.jsonl",
    "documents": "documents.jsonl",
}
DOCUMENTS_FOLDER = "documents"
_UNSAFE_NAME = re.compile(r"[^\w.\- ]+")


def export_source_id(*, owner) -> str:
    """Who and where the data comes from, as an opaque id: the same for every export of one account on
    one server (so a newer export imports only what is new), and telling nothing by itself."""
    key = (settings.SECRET_KEY or "recollect").encode()
    return "recollect:" + hmac.new(key, f"export-source:{owner.pk}".encode(), hashlib.sha256).hexdigest()[:32]


def iso(value: datetime | None) -> str | None:
    return value.isoformat() if value else None


def _vector(row: dict, vectors: bool) -> dict:
    if not vectors or row.get("embedding") is None:
        return {}
    return {"embedding_model": row["embedding_model"], "embedding": [float(x) for x in row["embedding"]]}


def safe_member_name(filename: str) -> str:
    """A file name that is one harmless path segment inside the zip."""
    name = _UNSAFE_NAME.sub("_", PurePosixPath(filename.replace("\\", "/")).name).strip(" .")
    return name[:200] or "file"


class ExportWriter:
    """A zip being written: each member streamed through a SHA-256, counted, listed for the manifest."""

    def __init__(self, target: IO[bytes]) -> None:
        self.zip = zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED, allowZip64=True)
        self.files: dict[str, dict[str, Any]] = {}

    def write_chunks(self, name: str, chunks: Iterable[bytes], *, records: int | None = None) -> dict[str, Any]:
        digest, size = hashlib.sha256(), 0
        info = zipfile.ZipInfo(name, date_time=timezone.now().timetuple()[:6])
        info.compress_type = zipfile.ZIP_DEFLATED
        with self.zip.open(info, "w", force_zip64=True) as member:
            for chunk in chunks:
                digest.update(chunk)
                size += len(chunk)
                member.write(chunk)
        entry = {"sha256": digest.hexdigest(), "bytes": size}
        if records is not None:
            entry["records"] = records
        self.files[name] = entry
        return entry

    def write_records(self, name: str, records: Iterable[dict]) -> int:
        count = 0

        def lines() -> Iterator[bytes]:
            nonlocal count
            for record in records:
                count += 1
                yield (json.dumps(record, ensure_ascii=False, separators=(",", ":")) + "\n").encode("utf-8")

        self.write_chunks(name, lines())
        self.files[name]["records"] = count
        return count

    def finish(self, manifest: dict[str, Any]) -> None:
        body = json.dumps(manifest, ensure_ascii=False, indent=2).encode("utf-8")
        self.zip.writestr(MANIFEST_NAME, body, compress_type=zipfile.ZIP_DEFLATED)
        self.zip.close()


def _sessions(owner) -> Iterator[dict]:
    rows = ChatSession.objects.filter(owner=owner).order_by("created_at", "id")
    for session in rows.iterator(chunk_size=EXPORT_BATCH):
        yield {
            "id": str(session.id),
            "uri": session.uri,
            "title": session.title,
            "agent_id": session.agent_id,
            "metadata": session.metadata,
            "created_at": iso(session.created_at),
            "updated_at": iso(session.updated_at),
            "last_message_at": iso(session.last_message_at),
            "committed_at": iso(session.committed_at),
            "rolling_summary": session.rolling_summary,
            "summary_through_seq": session.summary_through_seq,
        }


def _archives(owner, vectors: bool) -> Iterator[dict]:
    fields = ["uri", "session_id", "agent_id", "index", "first_seq", "last_seq", "message_count"]
    fields += ["abstract", "overview", "overview_data", "created_at", "embedding", "embedding_model"]
    rows = Archive.objects.filter(owner=owner).order_by("session_id", "index").values(*fields)
    for row in rows.iterator(chunk_size=EXPORT_BATCH):
        yield {
            "id": row["uri"],
            "session_id": str(row["session_id"]),
            **{key: row[key] for key in fields[2:9]},
            "created_at": iso(row["created_at"]),
            **_vector(row, vectors),
        }


def _messages(owner, vectors: bool) -> Iterator[dict]:
    fields = ["id", "session_id", "seq", "role", "content", "created_at", "metadata", "token_count", "archive__uri"]
    wanted = [*fields, "embedding_model", "embedding"] if vectors else fields
    rows = Message.objects.filter(owner=owner).order_by("session_id", "seq").values(*wanted)
    for row in rows.iterator(chunk_size=EXPORT_BATCH):
        yield {
            "id": row["id"],
            "session_id": str(row["session_id"]),
            "seq": row["seq"],
            "role": row["role"],
            "content": row["content"],
            "created_at": iso(row["created_at"]),
            "metadata": row["metadata"],
            "token_count": row["token_count"],
            "archive_id": row["archive__uri"],
            **_vector(row, vectors),
        }


def _memories(owner, vectors: bool) -> Iterator[dict]:
    through = Memory.source_messages.through.objects.filter(memory__owner=owner)
    sources: dict[int, list[int]] = defaultdict(list)
    for memory_id, message_id in through.order_by("message_id").values_list("memory_id", "message_id"):
        sources[memory_id].append(message_id)
    rows = Memory.objects.filter(owner=owner).select_related("source_archive").order_by("id")
    if not vectors:
        rows = rows.defer("embedding")
    for memory in rows.iterator(chunk_size=EXPORT_BATCH):
        row = {"embedding": memory.embedding if vectors else None, "embedding_model": memory.embedding_model}
        yield {
            "id": memory.id,
            "uri": memory.uri,
            "agent_id": memory.agent_id,
            "category": memory.category,
            "key": memory.key,
            "content": memory.content,
            "history": memory.history,
            "source_archive_id": memory.source_archive.uri if memory.source_archive else None,
            "source_message_ids": sources.get(memory.id, []),
            "superseded_by": memory.superseded_by_id,
            "created_at": iso(memory.created_at),
            "updated_at": iso(memory.updated_at),
            **_vector(row, vectors),
        }


def document_member(document: Document) -> str:
    return f"{DOCUMENTS_FOLDER}/{document.id}/{safe_member_name(document.filename or document.title)}"


def _file_chunks(document: Document) -> Iterator[bytes]:
    with document.file.open("rb") as stored:
        while chunk := stored.read(COPY_CHUNK_BYTES):
            yield chunk


def _documents(owner, writer: ExportWriter, missing: list[str]) -> list[dict]:
    """Each document's original file into the zip, and the documents' records (one small dict per
    document, written after the files: a zip takes one member at a time)."""
    records = []
    roots = {
        row["document_id"]: row
        for row in DocumentNode.objects.filter(owner=owner, level=0).values("document_id", "abstract", "overview")
    }
    for document in Document.objects.filter(owner=owner).order_by("created_at", "id").iterator(chunk_size=100):
        member = None
        if document.file and document.file.storage.exists(document.file.name):
            member = document_member(document)
            writer.write_chunks(member, _file_chunks(document))
        else:
            missing.append(str(document.id))
        root = roots.get(document.id, {})
        records.append(
            {
                "id": str(document.id),
                "uri": document.uri,
                "title": document.title,
                "title_given": document.title_given,
                "filename": document.filename,
                "media_type": document.media_type,
                "size_bytes": document.size_bytes,
                "sha256": document.content_hash,
                "status": document.status,
                "error": document.error,
                "node_count": document.node_count,
                "created_at": iso(document.created_at),
                "indexed_at": iso(document.indexed_at),
                "abstract": root.get("abstract", ""),
                "overview": root.get("overview", ""),
                "file": member,
            }
        )
    return records


def export_write(*, owner, target: IO[bytes], vectors: bool = True) -> dict[str, Any]:
    """Writes everything ``owner`` owns into ``target`` (a seekable binary file) as an export zip and
    returns its manifest."""
    writer = ExportWriter(target)
    counts: dict[str, int] = {}
    missing: list[str] = []
    with transaction.atomic():
        with connection.cursor() as cursor:
            # One snapshot for every read, so that no row written meanwhile is counted but not exported.
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        counts["sessions"] = writer.write_records(RECORD_FILES["sessions"], _sessions(owner))
        counts["archives"] = writer.write_records(RECORD_FILES["archives"], _archives(owner, vectors))
        counts["messages"] = writer.write_records(RECORD_FILES["messages"], _messages(owner, vectors))
        counts["memories"] = writer.write_records(RECORD_FILES["memories"], _memories(owner, vectors))
        counts["documents"] = writer.write_records(RECORD_FILES["documents"], _documents(owner, writer, missing))
    manifest = {
        "format": EXPORT_FORMAT,
        "version": EXPORT_VERSION,
        "created_at": iso(timezone.now()),
        "generator": "Recollect",
        "source": {"id": export_source_id(owner=owner), "username": owner.get_username()},
        "embedding": {
            "model": ai.active_embedding_model(),
            "dimensions": settings.EMBEDDING_DIMENSIONS,
            "message_context": settings.MESSAGE_CONTEXT,
            "vectors_included": vectors,
        },
        "counts": counts,
        "documents_without_file": missing,
        "files": writer.files,
    }
    writer.finish(manifest)
    return manifest


def export_filename(*, owner, suffix: str = "") -> str:
    stamp = timezone.now().strftime("%Y%m%d-%H%M%S")
    return f"recollect-export-{safe_member_name(owner.get_username())}{suffix}-{stamp}.zip"
