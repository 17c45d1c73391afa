"""Writes of sessions and memory: recording, commit into archives, long-term memories, the rolling
summary and the session working set. Each function owns its transaction; workers are enqueued only
after the rows they need are committed."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db import IntegrityError, connection, transaction
from django.db.models import Max, Q
from django.utils import timezone

from retrieval_app import ai
from sessions_app.exceptions import SessionNotFound
from sessions_app.models import Archive, ChatSession, Memory, Message

logger = logging.getLogger(__name__)

# Message metadata marking text the product itself put into a conversation (recalled memories,
# summaries, retrieved passages): it is context, never a new fact about the user.
INJECTED_SOURCES = frozenset({"recall", "memory", "memories", "summary", "context", "retrieval"})


# --- Sessions -----------------------------------------------------------------------------------------


def session_create(*, owner, title: str = "", agent_id: str = "", metadata: dict | None = None) -> ChatSession:
    return ChatSession.objects.create(owner=owner, title=title, agent_id=agent_id, metadata=metadata or {})


def session_update(*, session: ChatSession, title: str | None = None, metadata: dict | None = None) -> ChatSession:
    fields = ["updated_at"]
    if title is not None:
        session.title = title
        fields.append("title")
    if metadata is not None:
        session.metadata = metadata
        fields.append("metadata")
    session.save(update_fields=fields)
    return session


@transaction.atomic
def session_delete(*, session: ChatSession) -> None:
    """Deletes the session with its messages, archives and traces, and the memories that came from it
    alone. A memory also drawn from another session stays, without this session's sources."""
    _lock_commits(session.pk)  # a commit in flight finishes first, so its memories are seen here
    owner_id = session.owner_id
    from_here = Memory.objects.filter(owner_id=owner_id).filter(
        Q(source_archive__session=session) | Q(source_messages__session=session)
    )
    elsewhere = Memory.objects.filter(owner_id=owner_id).filter(
        Q(source_messages__in=Message.objects.filter(owner_id=owner_id).exclude(session=session))
        | Q(source_archive__in=Archive.objects.filter(owner_id=owner_id).exclude(session=session))
    )
    Memory.objects.filter(id__in=from_here.values("id")).exclude(id__in=elsewhere.values("id")).delete()
    session.delete()
    working_set_clear(session_id=str(session.id))


# --- Messages -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class NewMessage:
    role: str
    content: str
    created_at: datetime | None = None
    metadata: dict = field(default_factory=dict)


def message_bulk_create(*, session: ChatSession, messages: Sequence[NewMessage]) -> list[Message]:
    """Records messages as given, in order, after the session's last one. No model is called: the
    embeddings are made by a worker once the rows are committed, and a failure there loses nothing."""
    now = timezone.now()
    with transaction.atomic():
        # Locking the session row serialises appends, so sequence numbers never collide.
        locked = _fresh(session, lock_row=True)
        last_seq = Message.objects.filter(session=locked).aggregate(last=Max("seq"))["last"] or 0
        rows = [
            Message(
                session=locked,
                owner_id=locked.owner_id,
                agent_id=locked.agent_id,
                seq=last_seq + offset,
                role=item.role,
                content=item.content,
                created_at=item.created_at or now,
                token_count=ai.estimate_tokens(item.content),
                metadata=item.metadata or {},
            )
            for offset, item in enumerate(messages, start=1)
        ]
        Message.objects.bulk_create(rows)
        newest = max(row.created_at for row in rows)
        if locked.last_message_at is None or newest > locked.last_message_at:
            locked.last_message_at = newest
        locked.save(update_fields=["last_message_at", "updated_at"])
        ids = [row.id for row in rows]
        session_id = str(locked.id)
        transaction.on_commit(lambda: _enqueue_embeddings(ids))
        if settings.AUTO_COMMIT_TURNS:
            pending = Message.objects.filter(session=locked, archive__isnull=True).count()
            if pending >= settings.AUTO_COMMIT_TURNS:
                transaction.on_commit(lambda: _enqueue_auto_commit(session_id))
    session.last_message_at = locked.last_message_at
    return rows


def _enqueue_embeddings(message_ids: list[int]) -> None:
    from sessions_app.tasks import embed_messages

    try:
        embed_messages.delay(message_ids)
    except Exception:  # a broker outage must not fail the write; backfill_embeddings catches up
        logger.exception("could not enqueue embeddings for %d messages", len(message_ids))


def _enqueue_auto_commit(session_id: str) -> None:
    from sessions_app.tasks import session_auto_commit

    try:
        session_auto_commit.delay(session_id)
    except Exception:  # the next write retries it
        logger.exception("could not enqueue the auto-commit of session %s", session_id)


def is_injected(message: Message) -> bool:
    """Text the product itself put into the conversation: system turns and marked context."""
    metadata = message.metadata or {}
    return (
        message.role == Message.Role.SYSTEM
        or bool(metadata.get("injected"))
        or str(metadata.get("source", "")).lower() in INJECTED_SOURCES
    )


# --- Commit -------------------------------------------------------------------------------------------


@dataclass
class CommitResult:
    archive: Archive | None
    memories: list[Memory]
    memory_diff: dict[str, list[dict[str, Any]]]
    committed: bool
    reason: str = ""


def archive_uri(session_id: Any, index: int) -> str:
    return f"viking://session/{session_id}/history/archive_{index:03d}"


def _lock_commits(session_id) -> None:
    """Serialises commits (and deletes) of one session for the rest of the transaction.

    An advisory lock rather than the session row: appends lock the row only for an instant, and must
    not wait behind a commit's model calls.
    """
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [f"commit:{session_id}"])


def _fresh(session: ChatSession, *, lock_row: bool = False) -> ChatSession:
    rows = ChatSession.objects.select_for_update() if lock_row else ChatSession.objects
    try:
        return rows.get(pk=session.pk)
    except ChatSession.DoesNotExist as exc:  # deleted by another request meanwhile
        raise SessionNotFound() from exc


def session_commit(*, session: ChatSession, keep_recent: int = 0) -> CommitResult:
    """Archives the session's uncommitted turns, but the last ``keep_recent``, with an L0 abstract and
    an L1 overview, and extracts long-term memories from them.

    Commits of one session run one after the other (the second finds nothing new, so no message is
    archived twice or lost), while new messages keep being recorded: they come after the turns being
    archived and wait for the next commit.
    """
    with transaction.atomic():
        _lock_commits(session.pk)
        locked = _fresh(session)
        pending = list(Message.objects.filter(session=locked, archive__isnull=True).order_by("seq"))
        if keep_recent > 0:
            pending = pending[:-keep_recent] if len(pending) > keep_recent else []
        if not pending:
            return CommitResult(
                archive=None,
                memories=[],
                memory_diff=_empty_diff(),
                committed=False,
                reason="Nothing new to commit: every turn is already archived or kept live.",
            )
        engine = ai.text_engine()
        turns = [ai.Turn(role=m.role, content=m.content) for m in pending if not is_injected(m)]
        overview = engine.overview(turns, owner_id=locked.owner_id) if turns else ai.Overview()
        index = (Archive.objects.filter(session=locked).aggregate(last=Max("index"))["last"] or 0) + 1
        archive = Archive.objects.create(
            session=locked,
            owner_id=locked.owner_id,
            agent_id=locked.agent_id,
            index=index,
            uri=archive_uri(locked.id, index),
            first_seq=pending[0].seq,
            last_seq=pending[-1].seq,
            message_count=len(pending),
            abstract=overview.abstract,
            overview=overview.as_text(),
            overview_data=overview.as_dict(),
        )
        Message.objects.filter(id__in=[m.id for m in pending]).update(archive=archive)
        ChatSession.objects.filter(pk=locked.pk).update(committed_at=timezone.now(), updated_at=timezone.now())
        memories, diff = memory_extract_and_upsert(session=locked, archive=archive, messages=pending, engine=engine)
        archive_id, memory_ids = archive.id, [m.id for m in memories if m.embedding is None]
        transaction.on_commit(lambda: _enqueue_commit_embeddings(archive_id, memory_ids))
    return CommitResult(archive=archive, memories=memories, memory_diff=diff, committed=True)


def _enqueue_commit_embeddings(archive_id: int, memory_ids: list[int]) -> None:
    from sessions_app.tasks import embed_archives, embed_memories

    try:
        embed_archives.delay([archive_id])
        if memory_ids:
            embed_memories.delay(memory_ids)
    except Exception:  # recall falls back to keywords until backfill_embeddings runs
        logger.exception("could not enqueue embeddings for archive %s", archive_id)


def _empty_diff() -> dict[str, list[dict[str, Any]]]:
    return {"created": [], "updated": [], "unchanged": []}


# --- Long-term memories -------------------------------------------------------------------------------


def _normalise(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s]", " ", text.lower())).strip()


def _strip_known_text(content: str, known: set[str]) -> str:
    """Removes sentences that repeat what the system already knows or said (recalled memories,
    summaries pasted back by an integration), so they are never mistaken for new statements."""
    from retrieval_app.ai.extractive import split_sentences

    kept = []
    for sentence in split_sentences(content):
        normal = _normalise(sentence)
        if normal and not any(normal == k or (len(k) > 12 and k in normal) for k in known):
            kept.append(sentence)
    return " ".join(kept)


def memory_extract_and_upsert(
    *, session: ChatSession, archive: Archive, messages: Sequence[Message], engine: ai.TextEngine
) -> tuple[list[Memory], dict[str, list[dict[str, Any]]]]:
    """Extracts memories from ``messages`` and merges them into the owner's memories by key."""
    known = {
        _normalise(text)
        for text in Memory.objects.filter(
            owner_id=session.owner_id, agent_id=session.agent_id, superseded_by__isnull=True
        ).values_list("content", flat=True)
    }
    known |= {_normalise(line) for line in session.rolling_summary.splitlines()}
    # Earlier archives' overviews may be pasted back; the archive being made quotes these very turns.
    earlier = Archive.objects.filter(session=session).exclude(pk=archive.pk).values_list("overview", flat=True)
    for text in earlier:
        known |= {_normalise(line.lstrip("- ")) for line in text.splitlines()}
    known.discard("")

    sources: list[Message] = []
    turns: list[ai.Turn] = []
    for message in messages:
        if is_injected(message):
            continue
        content = _strip_known_text(message.content, known)
        if content:
            sources.append(message)
            turns.append(ai.Turn(role=message.role, content=content))
    if not turns:
        return [], _empty_diff()
    candidates = engine.extract_memories(turns, owner_id=session.owner_id)
    return memory_upsert(
        owner_id=session.owner_id,
        agent_id=session.agent_id,
        archive=archive,
        candidates=[(c, [sources[i] for i in c.turns if i < len(sources)]) for c in candidates],
    )


def memory_upsert(
    *,
    owner_id: int,
    agent_id: str,
    archive: Archive | None,
    candidates: Sequence[tuple[ai.MemoryCandidate, Sequence[Message]]],
) -> tuple[list[Memory], dict[str, list[dict[str, Any]]]]:
    """Creates or updates memories by (category, key): a changed text replaces the old one, which
    is kept in ``history``; an identical text leaves the memory as it was. The memories concerned
    are locked while they are compared and written, so two sessions committing at once never lose
    each other's updates. Must run inside a transaction."""
    keys = Q(pk__in=[])
    for candidate, _ in candidates:
        keys |= Q(category=candidate.category, key=candidate.key)
    # No join to the archive here: a row re-read after waiting for its lock would come back with the
    # newer archive id but without that archive, which this statement's snapshot does not see.
    current = (
        Memory.objects.select_for_update()
        .filter(keys, owner_id=owner_id, agent_id=agent_id, superseded_by__isnull=True)
        .order_by("pk")  # the same lock order in every transaction: no deadlocks
    )
    by_key = {(m.category, m.key): m for m in current}
    diff = _empty_diff()
    touched: list[Memory] = []
    now = timezone.now()
    for candidate, source_messages in candidates:
        memory = by_key.get((candidate.category, candidate.key))
        created = False
        if memory is None:
            try:
                with transaction.atomic():  # a concurrent commit may create the same key first
                    memory = Memory.objects.create(
                        owner_id=owner_id,
                        agent_id=agent_id,
                        category=candidate.category,
                        key=candidate.key,
                        content=candidate.content,
                        source_archive=archive,
                    )
                created = True
                diff["created"].append(_memory_summary(memory))
            except IntegrityError:
                memory = Memory.objects.select_for_update().get(
                    owner_id=owner_id,
                    agent_id=agent_id,
                    category=candidate.category,
                    key=candidate.key,
                    superseded_by__isnull=True,
                )
        if not created and _normalise(memory.content) == _normalise(candidate.content):
            diff["unchanged"].append(_memory_summary(memory))
        elif not created:
            previous = memory.content
            memory.history = [
                *memory.history,
                {
                    "content": previous,
                    "replaced_at": now.isoformat(),
                    "archive_uri": Archive.objects.filter(pk=memory.source_archive_id)
                    .values_list("uri", flat=True)
                    .first(),
                },
            ]
            memory.content = candidate.content
            memory.source_archive = archive
            memory.embedding = None  # the old vector describes the old text
            memory.embedding_model = ""
            memory.save(
                update_fields=["history", "content", "source_archive", "embedding", "embedding_model", "updated_at"]
            )
            diff["updated"].append({**_memory_summary(memory), "previous": previous})
        if source_messages:
            memory.source_messages.add(*source_messages)
        by_key[(memory.category, memory.key)] = memory
        touched.append(memory)
    return touched, diff


def _memory_summary(memory: Memory) -> dict[str, Any]:
    return {
        "id": memory.id,
        "uri": memory.uri,
        "category": memory.category,
        "key": memory.key,
        "content": memory.content,
    }


def memory_delete(*, memory: Memory) -> None:
    memory.delete()


# --- Rolling summary (seed 001) -----------------------------------------------------------------------


@dataclass
class HistoryContext:
    """What a model is handed of a session: a rolling summary of older turns, then recent turns verbatim."""

    summary: str
    turns: list[Message]
    summary_through_seq: int
    folded: int = 0
    error: str = ""

    @property
    def token_estimate(self) -> int:
        return ai.estimate_tokens(self.summary) + sum(ai.estimate_tokens(_clip(t.content)) for t in self.turns)


def _clip(content: str) -> str:
    """One turn never takes more than the whole verbatim budget."""
    limit = settings.HISTORY_TOKEN_BUDGET * ai.tokens.CHARS_PER_TOKEN
    return content if len(content) <= limit else content[: limit - 4].rstrip() + " ..."


def _tokens(message: Message) -> int:
    return ai.estimate_tokens(_clip(message.content))


def _window(messages: Sequence[Message], *, max_turns: int, budget: int) -> list[Message]:
    """The newest messages that fit in ``max_turns`` and ``budget`` tokens (always the newest one)."""
    window: list[Message] = []
    used = 0
    for message in reversed(messages):
        cost = _tokens(message)
        if window and (len(window) >= max_turns or used + cost > budget):
            break
        window.append(message)
        used += cost
    return list(reversed(window))


FOLD_BATCH = 200


def session_history_context(*, session: ChatSession) -> HistoryContext:
    """The session's history, bounded whatever its length (seed 001).

    The last HISTORY_MAX_TURNS turns within HISTORY_TOKEN_BUDGET stay verbatim. Older turns are folded
    into the rolling summary lazily: only when the verbatim turns overflow, and then down to half the
    window, so the summariser runs once every few turns rather than on each. The summary and its
    watermark are stored before any turn leaves the verbatim window; if summarising fails, the window
    stays as it was.
    """
    max_turns, budget = settings.HISTORY_MAX_TURNS, settings.HISTORY_TOKEN_BUDGET
    if not settings.ENABLE_HISTORY_SUMMARIZATION:
        recent = list(reversed(Message.objects.filter(session=session).order_by("-seq")[:max_turns]))
        return HistoryContext(
            summary="", turns=_window(recent, max_turns=max_turns, budget=budget), summary_through_seq=0
        )

    for _attempt in range(2):
        watermark, summary = session.summary_through_seq, session.rolling_summary
        unsummarized = list(Message.objects.filter(session=session, seq__gt=watermark).order_by("seq"))
        fits = len(unsummarized) <= max_turns and sum(_tokens(m) for m in unsummarized) <= budget
        if fits:
            return HistoryContext(summary=summary, turns=unsummarized, summary_through_seq=watermark)
        keep = _window(unsummarized, max_turns=max(1, max_turns // 2), budget=budget // 2)
        to_fold = unsummarized[: len(unsummarized) - len(keep)]
        try:
            engine = ai.text_engine()
            for start in range(0, len(to_fold), FOLD_BATCH):
                batch = [m for m in to_fold[start : start + FOLD_BATCH] if not is_injected(m)]
                summary = engine.summarize(
                    [ai.Turn(role=m.role, content=m.content) for m in batch],
                    previous=summary,
                    max_words=settings.ROLLING_SUMMARY_MAX_WORDS,
                    owner_id=session.owner_id,
                )
        except Exception as exc:  # nothing is dropped: the caller gets every unsummarized turn
            logger.exception("rolling summary of session %s failed", session.id)
            return HistoryContext(
                summary=session.rolling_summary, turns=unsummarized, summary_through_seq=watermark, error=str(exc)
            )
        new_watermark = to_fold[-1].seq
        # Stored only if no other process folded meanwhile; otherwise start again from its summary.
        stored = ChatSession.objects.filter(pk=session.pk, summary_through_seq=watermark).update(
            rolling_summary=summary, summary_through_seq=new_watermark, summary_updated_at=timezone.now()
        )
        if stored:
            session.rolling_summary, session.summary_through_seq = summary, new_watermark
            return HistoryContext(summary=summary, turns=keep, summary_through_seq=new_watermark, folded=len(to_fold))
        session.refresh_from_db(fields=["rolling_summary", "summary_through_seq", "summary_updated_at"])
    return HistoryContext(
        summary=session.rolling_summary, turns=unsummarized, summary_through_seq=session.summary_through_seq
    )


# --- Session working set (seed 001) -------------------------------------------------------------------


@dataclass
class WorkingSet:
    """What a session is currently about: terms resolved so far, and the documents and sections in play."""

    resolved_terms: dict[str, str] = field(default_factory=dict)
    active_documents: list[str] = field(default_factory=list)
    active_sections: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "resolved_terms": dict(self.resolved_terms),
            "active_documents": list(self.active_documents),
            "active_sections": list(self.active_sections),
        }


MAX_TERMS, MAX_DOCUMENTS, MAX_SECTIONS = 50, 10, 20


def _working_set_key(session_id: str) -> str:
    return f"working-set:{session_id}"


def _working_set_ttl() -> int:
    return max(1, int(settings.SESSION_MEMORY_TTL_HOURS * 3600))


def working_set_get(*, session_id: str) -> WorkingSet:
    """The session's working set, kept alive for SESSION_MEMORY_TTL_HOURS after each access. An expired
    or missing one is simply empty: the session starts fresh."""
    if not settings.ENABLE_SESSION_MEMORY:
        return WorkingSet()
    key = _working_set_key(session_id)
    try:
        data = cache.get(key)
        if data is None:
            return WorkingSet()
        cache.touch(key, _working_set_ttl())
    except Exception:  # Redis down: the session works on without its working set, as after expiry
        logger.warning("working set of session %s unavailable", session_id, exc_info=True)
        return WorkingSet()
    return WorkingSet(**data)


def working_set_update(
    *,
    session_id: str,
    resolved_terms: dict[str, str] | None = None,
    documents: Sequence[str] = (),
    sections: Sequence[str] = (),
) -> WorkingSet:
    """Merges what a turn returned into the working set; the most recent documents and sections first."""
    if not settings.ENABLE_SESSION_MEMORY:
        return WorkingSet()
    current = working_set_get(session_id=session_id)
    terms = {**current.resolved_terms, **(resolved_terms or {})}
    updated = WorkingSet(
        resolved_terms=dict(list(terms.items())[-MAX_TERMS:]),
        active_documents=_most_recent_first(documents, current.active_documents, MAX_DOCUMENTS),
        active_sections=_most_recent_first(sections, current.active_sections, MAX_SECTIONS),
    )
    try:
        cache.set(_working_set_key(session_id), updated.as_dict(), _working_set_ttl())
    except Exception:  # Redis down: this turn's update is lost, nothing else
        logger.warning("could not store the working set of session %s", session_id, exc_info=True)
    return updated


def _most_recent_first(new: Sequence[str], old: Sequence[str], limit: int) -> list[str]:
    merged = list(dict.fromkeys([*new, *old]))
    return merged[:limit]


def working_set_clear(*, session_id: str) -> None:
    try:
        cache.delete(_working_set_key(session_id))
    except Exception:  # it expires by itself
        logger.warning("could not clear the working set of session %s", session_id, exc_info=True)
