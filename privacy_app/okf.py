"""A person's memories and conversation overviews as an Open Knowledge Format (OKF) bundle, for other
memory tools: a zip of Markdown files, each with YAML front matter.

Written to OKF v0.1 as its published implementations describe it: one concept per ``.md`` file, its path
(without ``.md``) its id; front matter with the one required field ``type`` and the optional ``title``,
``description``, ``resource``, ``tags`` and ``timestamp``; an ``index.md`` per folder listing it (the
root's declaring ``okf_version``); relations as ordinary relative Markdown links. Fields OKF does not
define are added under their own names (consumers keep unknown fields), so nothing Recollect knows is
lost. What maps to what is in docs/api.md ("Export as Markdown (OKF)").
"""

from __future__ import annotations

import re
import zipfile
from collections import defaultdict
from collections.abc import Iterator
from typing import IO, Any

import yaml
from django.db import connection, transaction

from privacy_app.exports import EXPORT_BATCH, iso
from sessions_app.models import Archive, Memory
from sessions_app.uris import message_uri

OKF_VERSION = "0.1"
MEMORY_TYPE, OVERVIEW_TYPE = "memory", "conversation-overview"
SLUG_CHARS = 60
_NOT_SLUG = re.compile(r"[^a-z0-9]+")


def slug(text: str) -> str:
    return _NOT_SLUG.sub("-", text.lower()).strip("-")[:SLUG_CHARS].strip("-") or "untitled"


def concept(front: dict[str, Any], body: str) -> str:
    matter = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=1000).strip()
    return f"---\n{matter}\n---\n\n{body.strip()}\n"


def _archive_path(archive: Archive) -> str:
    folder = f"{slug(archive.session.title or 'conversation')}-{str(archive.session_id)[:8]}"
    return f"conversations/{folder}/archive-{archive.index:03d}.md"


def _archives(owner) -> Iterator[tuple[str, str, Archive]]:
    rows = Archive.objects.filter(owner=owner).select_related("session").defer("embedding", "session__rolling_summary")
    for archive in rows.order_by("session__created_at", "session_id", "index").iterator(chunk_size=EXPORT_BATCH):
        title = f"{archive.session.title or 'Conversation'} ({archive.index})"
        front = {
            "type": OVERVIEW_TYPE,
            "title": title,
            "description": archive.abstract,
            "resource": archive.uri,
            "tags": ["recollect", "conversation"] + ([archive.agent_id] if archive.agent_id else []),
            "timestamp": iso(archive.created_at),
            "id": archive.uri,
            "session": str(archive.session_id),
            "messages": archive.message_count,
            "created": iso(archive.created_at),
        }
        yield _archive_path(archive), concept(front, f"# {title}\n\n{archive.overview or archive.abstract}"), archive


def _memory_body(memory: Memory, sources: list[str], archive_path: str | None) -> str:
    lines = [f"# {memory.key}", "", memory.content]
    if memory.history:
        lines += ["", "## History", ""]
        lines += [f"- {entry.get('replaced_at', '')}: {entry.get('content', '')}" for entry in memory.history]
    if archive_path or sources:
        lines += ["", "## Sources", ""]
        if archive_path:
            lines.append(f"- [the conversation it was drawn from](../../{archive_path})")
        lines += [f"- `{uri}`" for uri in sources]
    return "\n".join(lines)


def _memories(owner, archive_paths: dict[int, str]) -> Iterator[tuple[str, str, Memory]]:
    through = Memory.source_messages.through.objects.filter(memory__owner=owner)
    sources: dict[int, list[str]] = defaultdict(list)
    for memory_id, session_id, message_id in through.values_list("memory_id", "message__session_id", "message_id"):
        sources[memory_id].append(message_uri(session_id, message_id))
    rows = Memory.objects.filter(owner=owner, superseded_by__isnull=True).defer("embedding").order_by("category", "id")
    for memory in rows.iterator(chunk_size=EXPORT_BATCH):
        found = sources.get(memory.id, [])
        archive_path = archive_paths.get(memory.source_archive_id)
        front = {
            "type": MEMORY_TYPE,
            "title": memory.key,
            "description": memory.content,
            "resource": memory.uri,
            "tags": ["recollect", memory.category] + ([memory.agent_id] if memory.agent_id else []),
            "timestamp": iso(memory.updated_at),
            "id": memory.uri,
            "kind": "memory",
            "category": memory.category,
            "created": iso(memory.created_at),
            "updated": iso(memory.updated_at),
            "sources": found,
        }
        path = f"memories/{memory.category}/{slug(memory.key)}-{memory.id}.md"
        yield path, concept(front, _memory_body(memory, found, archive_path)), memory


def _index(title: str, entries: list[tuple[str, str]], *, root: bool = False) -> str:
    head = f'---\nokf_version: "{OKF_VERSION}"\n---\n\n' if root else ""
    lines = [f"- [{label}]({link})" for link, label in entries]
    return head + f"# {title}\n\n" + "\n".join(lines) + "\n"


def okf_write(*, owner, target: IO[bytes]) -> dict[str, int]:
    """Writes the owner's current memories and archive overviews as an OKF bundle into ``target``."""
    folders: dict[str, list[tuple[str, str]]] = defaultdict(list)
    counts = {"memories": 0, "overviews": 0}
    with zipfile.ZipFile(target, "w", compression=zipfile.ZIP_DEFLATED) as bundle, transaction.atomic():
        with connection.cursor() as cursor:
            cursor.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
        archive_paths: dict[int, str] = {}
        for path, text, archive in _archives(owner):
            bundle.writestr(path, text)
            archive_paths[archive.pk] = path
            folder, name = path.rsplit("/", 1)
            folders[folder].append((name, f"{archive.session.title or 'Conversation'} ({archive.index})"))
            counts["overviews"] += 1
        for path, text, memory in _memories(owner, archive_paths):
            bundle.writestr(path, text)
            folder, name = path.rsplit("/", 1)
            folders[folder].append((name, memory.key))
            counts["memories"] += 1
        _write_indexes(bundle, folders)
    return counts


def _write_indexes(bundle: zipfile.ZipFile, folders: dict[str, list[tuple[str, str]]]) -> None:
    parents: dict[str, set[str]] = defaultdict(set)
    for folder in folders:
        parts = folder.split("/")
        for depth in range(len(parts)):
            parents["/".join(parts[:depth])].add(parts[depth])
    for folder in sorted(set(folders) | set(parents)):
        entries = [(f"{child}/index.md", child) for child in sorted(parents.get(folder, ()))]
        entries += folders.get(folder, [])
        title = folder.rsplit("/", 1)[-1] if folder else "Recollect: memories and conversation overviews"
        bundle.writestr(f"{folder}/index.md" if folder else "index.md", _index(title, entries, root=not folder))
