"""Long-term memories: extracted from what people said, merged by (category, key), with history."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from retrieval_app.core import ai
from retrieval_app.core.ai.extractive import split_sentences
from retrieval_app.core.ai.memories import extract as extract_by_patterns
from retrieval_app.core.tasks import embed_later
from sessions_app.models import Archive, ChatSession, Memory, Message


def empty_diff() -> dict[str, list[dict[str, Any]]]:
    return {"created": [], "updated": [], "unchanged": []}


def _normalise(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s]", " ", text.lower())).strip()


def _strip_known_text(content: str, known: set[str]) -> str:
    """Removes sentences that repeat what the system already knows or said (recalled memories,
    summaries pasted back by an integration), so they are never mistaken for new statements."""
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
        if message.is_derived:
            continue
        content = _strip_known_text(message.content, known)
        if content:
            sources.append(message)
            turns.append(ai.Turn(role=message.role, content=content))
    if not turns:
        return [], empty_diff()
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
    diff = empty_diff()
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
            if memory.source_archive_id is None and archive is not None:
                # Noted in a chat turn before any archive held it: the archive of its conversation.
                memory.source_archive = archive
                memory.save(update_fields=["source_archive", "updated_at"])
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


@transaction.atomic
def memory_edit(*, memory: Memory, content: str) -> Memory:
    """A person corrects a memory: the text it replaces goes into its history, as a commit's update
    does, and its vector is made again from the new text."""
    memory = Memory.objects.select_for_update(of=("self",)).select_related("source_archive").get(pk=memory.pk)
    if _normalise(memory.content) == _normalise(content):
        return memory
    memory.history = [
        *memory.history,
        {
            "content": memory.content,
            "replaced_at": timezone.now().isoformat(),
            "archive_uri": memory.source_archive.uri if memory.source_archive else None,
            "edited": True,
        },
    ]
    memory.content = content
    memory.embedding = None  # the old vector describes the old text
    memory.embedding_model = ""
    memory.save(update_fields=["history", "content", "embedding", "embedding_model", "updated_at"])
    embed_later(kind="memories", ids=[memory.pk])
    return memory


def memory_delete(*, memory: Memory) -> None:
    memory.delete()


def _known_to_the_session(session: ChatSession) -> set[str]:
    """What the product already knows or wrote for this session, normalised: the owner's current
    memories, the rolling summary and every archive's overview (the same texts commit leaves out)."""
    known = {
        _normalise(text)
        for text in Memory.objects.filter(
            owner_id=session.owner_id, agent_id=session.agent_id, superseded_by__isnull=True
        ).values_list("content", flat=True)
    }
    known |= {_normalise(line) for line in session.rolling_summary.splitlines()}
    for text in Archive.objects.filter(session=session).values_list("overview", flat=True):
        known |= {_normalise(line.lstrip("- ")) for line in text.splitlines()}
    known.discard("")
    return known


def memory_note_from_turn(*, session: ChatSession, message: Message) -> dict[str, list[dict[str, Any]]]:
    """Notes the facts a person states in ``message`` as they say them, without waiting for a commit.

    Always the built-in patterns, whatever engine is configured: they are cheap and deterministic, so
    a chat turn can afford them before it answers. The message is stripped of known text (as commit
    does), and what the patterns find is merged into the owner's memories by key, with ``message`` as
    its source and no archive yet (the commit that archives the message adopts it). Returns the memory
    diff: ``created``, ``updated`` and ``unchanged``."""
    if message.role != Message.Role.USER or message.is_derived:
        return empty_diff()
    # Most turns state nothing the patterns know: they cost no query.
    if not extract_by_patterns([(message.role, message.content)]):
        return empty_diff()
    with transaction.atomic():
        content = _strip_known_text(message.content, _known_to_the_session(session))
        candidates = extract_by_patterns([(message.role, content)]) if content else []
        if not candidates:
            return empty_diff()
        memories, diff = memory_upsert(
            owner_id=session.owner_id,
            agent_id=session.agent_id,
            archive=None,
            candidates=[(candidate, [message]) for candidate in candidates],
        )
        embed_later(kind="memories", ids=[memory.id for memory in memories if memory.embedding is None])
    return diff
