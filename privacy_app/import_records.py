"""The database part of an import: sessions, archives, messages and memories of an export made anew
for the importing person, in the order the files refer to each other, inside the caller's transaction.

Items already imported from the same source are skipped; a session imported before takes only its new
turns and archives, numbered after its own. A memory whose (agent, category, key) the person already
holds is merged as a newer statement would be: the text said last stays current, the other becomes its
history.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.db.models import Max
from django.utils import timezone

from foundation import ai
from foundation.tasks import embed_later
from privacy_app.archive import ExportArchive, ImportInvalid, Record
from privacy_app.models import ImportedItem, ImportJob
from sessions_app.models import Archive, ChatSession, Memory, Message
from sessions_app.uris import archive_uri

WRITE_BATCH = 1000
TITLE_CHARS, AGENT_CHARS, KEY_CHARS = 255, 128, 255
ROLES = frozenset(Message.Role.values)
CATEGORIES = frozenset(Memory.Category.values)


@dataclass
class ImportContext:
    """One import's state: who imports, from which source, and what each source id became here."""

    owner: object
    source: str
    job: ImportJob
    reuse_model: str | None
    tick: Callable[[str, int], None]
    local: dict[str, dict[str, str]] = field(default_factory=lambda: defaultdict(dict))
    new: list[ImportedItem] = field(default_factory=list)
    skipped: dict[str, int] = field(default_factory=dict)

    def load_known(self) -> None:
        rows = ImportedItem.objects.filter(owner=self.owner, source=self.source)
        for kind, stable_id, local_id in rows.values_list("kind", "stable_id", "local_id").iterator(chunk_size=5000):
            self.local[kind][stable_id] = local_id

    def known(self, kind: str, stable_id: str) -> bool:
        if not self.local:
            self.load_known()
        return stable_id in self.local[kind]

    def remember(self, kind: str, stable_id: str, local_id: object) -> None:
        self.local[kind][stable_id] = str(local_id)
        self.new.append(
            ImportedItem(
                owner=self.owner,
                source=self.source,
                kind=kind,
                stable_id=stable_id,
                local_id=str(local_id),
                job=self.job,
            )
        )

    def skip(self, kind: str) -> None:
        self.skipped[kind] = self.skipped.get(kind, 0) + 1

    def flush(self) -> None:
        ImportedItem.objects.bulk_create(self.new, batch_size=WRITE_BATCH)
        self.new = []

    def vector(self, record: Record) -> tuple[list[float] | None, str]:
        """The record's vector when it came from the model configured here, else none (made again)."""
        vector = record.data.get("embedding")
        if not self.reuse_model or record.data.get("embedding_model") != self.reuse_model:
            return None, ""
        if not isinstance(vector, list) or len(vector) != settings.EMBEDDING_DIMENSIONS:
            return None, ""
        numbers = all(isinstance(x, int | float) and not isinstance(x, bool) for x in vector)
        return (vector, self.reuse_model) if numbers else (None, "")


def _embed_missing(kind: str, rows: list) -> None:
    embed_later(kind=kind, ids=[row.pk for row in rows if row.embedding is None])


@dataclass
class SessionPlace:
    """Where a session's imported turns and archives go: the local session, and the offsets that put
    them after what it holds already (zero for a session made by this import)."""

    session: ChatSession
    seq_offset: int = 0
    index_offset: int = 0


def _sessions(export: ExportArchive, context: ImportContext) -> dict[str, SessionPlace]:
    places: dict[str, SessionPlace] = {}
    batch: list[ChatSession] = []
    for number, data in export.records("sessions"):
        record = Record(data, f"sessions.jsonl line {number}")
        stable_id = record.stable_id()
        if context.known("session", stable_id):
            places[stable_id] = None  # placed below, with its offsets
            context.skip("sessions")
            continue
        session = ChatSession(
            owner=context.owner,
            title=record.text("title", limit=TITLE_CHARS),
            agent_id=record.text("agent_id", limit=AGENT_CHARS),
            metadata=record.obj("metadata"),
            created_at=record.when("created_at") or timezone.now(),
            last_message_at=record.when("last_message_at"),
            committed_at=record.when("committed_at"),
            rolling_summary=record.text("rolling_summary"),
            summary_through_seq=record.integer("summary_through_seq", 0),
        )
        batch.append(session)
        places[stable_id] = SessionPlace(session)
        context.remember("session", stable_id, session.id)
    ChatSession.objects.bulk_create(batch, batch_size=WRITE_BATCH)
    context.tick("sessions", len(batch))
    _place_known_sessions(context, places)
    return places


def _place_known_sessions(context: ImportContext, places: dict[str, SessionPlace | None]) -> None:
    earlier = {stable: context.local["session"][stable] for stable, place in places.items() if place is None}
    found = {str(s.id): s for s in ChatSession.objects.filter(owner=context.owner, id__in=earlier.values())}
    seqs = dict(
        Message.objects.filter(session_id__in=found)
        .values("session_id")
        .annotate(m=Max("seq"))
        .values_list("session_id", "m")
    )
    indexes = dict(
        Archive.objects.filter(session_id__in=found)
        .values("session_id")
        .annotate(m=Max("index"))
        .values_list("session_id", "m")
    )
    for stable, local_id in earlier.items():
        session = found.get(local_id)
        if session is None:  # deleted here since: its turns are not brought back piecemeal
            continue
        places[stable] = SessionPlace(session, seqs.get(session.id) or 0, indexes.get(session.id) or 0)


def _place_of(places: dict[str, SessionPlace], record: Record) -> SessionPlace | None:
    session_id = record.text("session_id", required=True)
    if session_id not in places:
        raise ImportInvalid(f"{record.where}: its session {session_id!r} is not in sessions.jsonl.")
    return places.get(session_id)


def _archives(export: ExportArchive, context: ImportContext, places: dict[str, SessionPlace]) -> None:
    batch: list[tuple[str, Archive]] = []
    for number, data in export.records("archives"):
        record = Record(data, f"archives.jsonl line {number}")
        stable_id, place = record.stable_id(), _place_of(places, record)
        if place is None or context.known("archive", stable_id):
            context.skip("archives")
            continue
        index = record.integer("index") + place.index_offset
        vector, model = context.vector(record)
        archive = Archive(
            session=place.session,
            owner=context.owner,
            agent_id=place.session.agent_id,
            index=index,
            uri=archive_uri(place.session.id, index),
            first_seq=record.integer("first_seq") + place.seq_offset,
            last_seq=record.integer("last_seq") + place.seq_offset,
            message_count=record.integer("message_count"),
            abstract=record.text("abstract"),
            overview=record.text("overview"),
            overview_data=record.obj("overview_data"),
            created_at=record.when("created_at") or timezone.now(),
            embedding=vector,
            embedding_model=model,
        )
        batch.append((stable_id, archive))
    Archive.objects.bulk_create([archive for _, archive in batch], batch_size=WRITE_BATCH)
    for stable_id, archive in batch:
        context.remember("archive", stable_id, archive.pk)
        context.local["archive_uri"][stable_id] = archive.uri
    _embed_missing("archives", [archive for _, archive in batch])
    context.tick("archives", len(batch))


def _message(record: Record, place: SessionPlace, context: ImportContext) -> Message:
    role = record.text("role", required=True)
    if role not in ROLES:
        raise ImportInvalid(f"{record.where}: 'role' must be one of {', '.join(sorted(ROLES))}.")
    content = record.text("content", required=True)
    vector, model = context.vector(record)
    archive_id = context.local["archive"].get(str(record.data.get("archive_id")))
    return Message(
        session=place.session,
        owner=context.owner,
        agent_id=place.session.agent_id,
        seq=record.integer("seq") + place.seq_offset,
        role=role,
        content=content,
        created_at=record.when("created_at") or timezone.now(),
        token_count=ai.estimate_tokens(content),
        metadata=record.obj("metadata"),
        archive_id=int(archive_id) if archive_id else None,
        embedding=vector,
        embedding_model=model,
    )


def _messages(export: ExportArchive, context: ImportContext, places: dict[str, SessionPlace]) -> None:
    batch: list[tuple[str, Message]] = []
    newest: dict = {}

    def write() -> None:
        Message.objects.bulk_create([m for _, m in batch], batch_size=WRITE_BATCH)
        for stable_id, message in batch:
            context.remember("message", stable_id, message.pk)
        _embed_missing("messages", [m for _, m in batch])
        context.tick("messages", len(batch))
        batch.clear()

    for number, data in export.records("messages"):
        record = Record(data, f"messages.jsonl line {number}")
        stable_id, place = record.stable_id(), _place_of(places, record)
        if place is None or context.known("message", stable_id):
            context.skip("messages")
            continue
        message = _message(record, place, context)
        batch.append((stable_id, message))
        newest[place.session.pk] = max(newest.get(place.session.pk, message.created_at), message.created_at)
        if len(batch) >= WRITE_BATCH:
            write()
    if batch:
        write()
    _touch_sessions(newest)


def _touch_sessions(newest: dict) -> None:
    """Sessions that got turns show their latest activity (as the source recorded it, or later)."""
    sessions = list(ChatSession.objects.filter(pk__in=newest).only("id", "last_message_at"))
    for session in sessions:
        latest = newest[session.pk]
        session.last_message_at = max(session.last_message_at or latest, latest)
    ChatSession.objects.bulk_update(sessions, ["last_message_at"], batch_size=WRITE_BATCH)


def import_records(*, export: ExportArchive, context: ImportContext) -> None:
    """Sessions, archives, messages and memories of ``export`` into the context's owner."""
    context.load_known()
    places = _sessions(export, context)
    _archives(export, context, places)
    _messages(export, context, places)
    from_memories(export, context)
    context.flush()


# --- memories ----------------------------------------------------------------------------------------


def _memory_order(records: list[Record]) -> list[Record]:
    """Memories a later one replaced come after it, so each can point to the one it was replaced by."""
    ids = {record.stable_id() for record in records}
    placed: set[str] = set()
    ordered: list[Record] = []
    waiting = records
    while waiting:
        later = []
        for record in waiting:
            target = record.data.get("superseded_by")
            if target is None or str(target) not in ids or str(target) in placed:
                ordered.append(record)
                placed.add(record.stable_id())
            else:
                later.append(record)
        if len(later) == len(waiting):
            raise ImportInvalid("memories.jsonl: memories replace each other in a circle.")
        waiting = later
    return ordered


def _history(record: Record, context: ImportContext) -> list[dict]:
    history = []
    for entry in record.items("history"):
        if isinstance(entry, dict) and isinstance(entry.get("content"), str):
            uri = context.local["archive_uri"].get(str(entry.get("archive_uri")), "")
            history.append({**entry, "archive_uri": uri})
    return history


def from_memories(export: ExportArchive, context: ImportContext) -> None:
    records = [Record(data, f"memories.jsonl line {number}") for number, data in export.records("memories")]
    current = {
        (m.agent_id, m.category, m.key): m
        for m in Memory.objects.filter(owner=context.owner, superseded_by__isnull=True).defer("embedding")
    }
    made: list[tuple[Memory, datetime | None]] = []
    links = []
    for record in _memory_order(records):
        stable_id = record.stable_id()
        if context.known("memory", stable_id):
            context.skip("memories")
            continue
        memory, is_new = _memory_in(record, context, current)
        context.remember("memory", stable_id, memory.pk)
        if is_new:
            made.append((memory, record.when("updated_at")))
        for message_id in record.items("source_message_ids"):
            local = context.local["message"].get(str(message_id))
            if local:
                links.append(Memory.source_messages.through(memory_id=memory.pk, message_id=int(local)))
    Memory.source_messages.through.objects.bulk_create(links, batch_size=WRITE_BATCH, ignore_conflicts=True)
    for memory, updated_at in made:  # as the source last changed them, not now
        memory.updated_at = updated_at or memory.updated_at
    Memory.objects.bulk_update([m for m, _ in made], ["updated_at"], batch_size=WRITE_BATCH)
    _embed_missing("memories", [m for m, _ in made])
    context.tick("memories", len(made))


def _memory_in(record: Record, context: ImportContext, current: dict) -> tuple[Memory, bool]:
    """One memory made for the owner, and whether it is new: the same fact they hold already is that
    one; a clash with another text of it is settled by which is newer."""
    category = record.text("category", required=True)
    if category not in CATEGORIES:
        raise ImportInvalid(f"{record.where}: 'category' must be one of {', '.join(sorted(CATEGORIES))}.")
    agent_id, key = record.text("agent_id", limit=AGENT_CHARS), record.text("key", required=True, limit=KEY_CHARS)
    content, updated = record.text("content", required=True), record.when("updated_at") or timezone.now()
    superseded = record.data.get("superseded_by")
    replaced_by = context.local["memory"].get(str(superseded)) if superseded is not None else None
    archive = context.local["archive"].get(str(record.data.get("source_archive_id")))
    vector, model = context.vector(record)
    memory = Memory(
        owner=context.owner,
        agent_id=agent_id,
        category=category,
        key=key,
        content=content,
        history=_history(record, context),
        source_archive_id=int(archive) if archive else None,
        superseded_by_id=int(replaced_by) if replaced_by else None,
        created_at=record.when("created_at") or timezone.now(),
        embedding=vector,
        embedding_model=model,
    )
    held = current.get((agent_id, category, key)) if replaced_by is None else None
    if held is not None and held.content == content:
        context.skip("memories")  # the same fact: its turns join it
        return held, False
    if held is not None:
        memory.superseded_by_id = held.pk  # kept out of the current slot until it is settled
    memory.save()
    if held is not None and updated > held.updated_at:
        Memory.objects.filter(pk=held.pk).update(superseded_by=memory)
        Memory.objects.filter(pk=memory.pk).update(superseded_by=None)
        memory.superseded_by_id = None
        current[(agent_id, category, key)] = memory
    return memory, True
