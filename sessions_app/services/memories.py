"""Long-term memories: extracted from what people said, merged by (category, key), with history."""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any

from django.db import IntegrityError, transaction
from django.db.models import Q
from django.utils import timezone

from foundation import ai, embedding
from foundation.ai import memories as extraction
from foundation.ai.extractive import split_sentences
from foundation.ai.memories import extract as extract_by_patterns
from foundation.scrub import Needles
from foundation.tasks import embed_later
from sessions_app.models import Archive, ChatSession, Memory, Message
from sessions_app.selectors import memory_family_names
from sessions_app.services.forgetting import messages_forget
from sessions_app.signals import memory_deleted

logger = logging.getLogger(__name__)


def empty_diff() -> dict[str, list[dict[str, Any]]]:
    return {"created": [], "updated": [], "unchanged": []}


def _normalise(text: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"[^\w\s]", " ", text.lower())).strip()


# A known text inside a sentence makes it a repetition only when it is most of the sentence: "Relevant
# memories: Lives in Lyon." repeats a memory, "I'm severely allergic to shellfish" does not repeat "Allergic to
# shellfish", a memory written by hand.
REPEATED_SHARE = 0.5


def _repeats(normal: str, known: str) -> bool:
    return normal == known or (len(known) > 12 and known in normal and len(known) >= REPEATED_SHARE * len(normal))


def _strip_known_text(content: str, known: set[str]) -> str:
    """Removes sentences that repeat what the system already knows or said (recalled memories,
    summaries pasted back by an integration), so they are never mistaken for new statements."""
    kept = []
    for sentence in split_sentences(content):
        normal = _normalise(sentence)
        if normal and not any(_repeats(normal, k) for k in known):
            kept.append(sentence)
    return " ".join(kept)


def memory_extract_and_upsert(
    *, session: ChatSession, archive: Archive, messages: Sequence[Message], engine: ai.TextEngine
) -> tuple[list[Memory], dict[str, list[dict[str, Any]]]]:
    """Extracts memories from ``messages`` and merges them into the owner's memories by key; the keys
    the owner already has are handed to the engine, so that a model updates a memory rather than
    repeating it under another name."""
    current = list(
        Memory.objects.filter(owner_id=session.owner_id, agent_id=session.agent_id, superseded_by__isnull=True)
        .order_by("-updated_at")
        .values_list("category", "key", "content")
    )
    known = {_normalise(content) for _, _, content in current}
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
    candidates = engine.extract_memories(
        turns, owner_id=session.owner_id, known_keys=[(category, key) for category, key, _ in current]
    )
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
            memory, created = _create_or_lock(
                owner_id=owner_id, agent_id=agent_id, candidate=candidate, archive=archive
            )
            if created:
                diff["created"].append(_memory_summary(memory))
        if not created and _normalise(memory.content) == _normalise(candidate.content):
            if memory.source_archive_id is None and archive is not None:
                # Added by hand or noted during a chat, now said in a conversation that was archived.
                memory.source_archive = archive
                memory.save(update_fields=["source_archive", "updated_at"])
            diff["unchanged"].append(_memory_summary(memory))
        elif not created:
            previous = _replace_text(memory, content=candidate.content, archive=archive, now=now)
            diff["updated"].append({**_memory_summary(memory), "previous": previous})
        if source_messages:
            memory.source_messages.add(*source_messages)
        by_key[(memory.category, memory.key)] = memory
        touched.append(memory)
    return touched, diff


def _create_or_lock(
    *, owner_id: int, agent_id: str, candidate: ai.MemoryCandidate, archive: Archive | None
) -> tuple[Memory, bool]:
    """A new memory, or (when a concurrent commit created the same key first) that one, locked."""
    try:
        with transaction.atomic():
            memory = Memory.objects.create(
                owner_id=owner_id,
                agent_id=agent_id,
                category=candidate.category,
                key=candidate.key,
                content=candidate.content,
                source_archive=archive,
            )
        return memory, True
    except IntegrityError:
        locked = Memory.objects.select_for_update().get(
            owner_id=owner_id,
            agent_id=agent_id,
            category=candidate.category,
            key=candidate.key,
            superseded_by__isnull=True,
        )
        return locked, False


def _replace_text(memory: Memory, *, content: str, archive: Archive | None, now) -> str:
    """A commit's new text for a memory; the text it replaces (returned) goes into its history."""
    previous = memory.content
    memory.history = [
        *memory.history,
        {
            "content": previous,
            "replaced_at": now.isoformat(),
            "archive_uri": Archive.objects.filter(pk=memory.source_archive_id).values_list("uri", flat=True).first(),
        },
    ]
    memory.content = content
    memory.source_archive = archive
    memory.embedding = None  # the old vector describes the old text
    memory.embedding_model = ""
    memory.save(update_fields=["history", "content", "source_archive", "embedding", "embedding_model", "updated_at"])
    return previous


def _memory_summary(memory: Memory) -> dict[str, Any]:
    return {
        "id": memory.id,
        "uri": memory.uri,
        "category": memory.category,
        "key": memory.key,
        "label": extraction.label(memory.key, memory.content),
        "content": memory.content,
    }


def _in_first_person(content: str) -> str:
    """A memory's text as its owner would say it: "Is allergic to peanuts." -> "I'm allergic to peanuts.",
    "Prefers oat milk in coffee." -> "I prefer oat milk in coffee."."""
    text = re.sub(r"^Their\b", "My", content.strip())
    text = re.sub(r"^Is\b", "I'm", text)
    text = re.sub(r"^Has\b", "I have", text)
    text = re.sub(r"^Does not\b", "I don't", text)
    return re.sub(
        r"^([A-Z][a-z]+?)(ies|s)\b", lambda m: f"I {m.group(1).lower()}{'y' if m.group(2) == 'ies' else ''}", text
    )


def _key_for(*, category: str, content: str) -> str:
    """The key of a memory a person wrote: the one extraction gives the same statement, so that a later
    conversation on the subject updates it ("Allergic to peanuts" -> peanut_allergy), else its words."""
    for said in (content, _in_first_person(content)):
        found = [c for c in extraction.extract([("user", said)]) if c.category == category]
        if len(found) == 1:
            return found[0].key
    return extraction.slug(content)


@transaction.atomic
def memory_create(*, owner, category: str, content: str, key: str = "", agent_id: str = "") -> tuple[Memory, bool]:
    """A person adds a memory; ``(memory, created)``. Without a key, one is derived from the text. When
    the owner already has a memory with that category and key, it is updated in place instead, its old
    text kept in its history as a person's correction (as ``memory_edit`` does). It is embedded by a
    worker once written, and found by its words until then."""
    key = extraction.key_of(key) or _key_for(category=category, content=content)
    existing = (
        Memory.objects.select_for_update()
        .filter(owner=owner, agent_id=agent_id, category=category, key=key, superseded_by__isnull=True)
        .first()
    )
    if existing is None:
        try:
            with transaction.atomic():  # the same key may be written by a commit at this very moment
                memory = Memory.objects.create(
                    owner=owner, agent_id=agent_id, category=category, key=key, content=content
                )
        except IntegrityError:
            existing = Memory.objects.select_for_update().get(
                owner=owner, agent_id=agent_id, category=category, key=key, superseded_by__isnull=True
            )
        else:
            embed_later(kind="memories", ids=[memory.pk])
            return memory, True
    return memory_edit(memory=existing, content=content), False


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


@transaction.atomic
def memory_delete(*, memory: Memory) -> None:
    """Deletes the memory with its history and the earlier versions it replaced, and takes it out of what
    other rows kept of it: the answers that noted or cited it, and the search traces that found it
    (``memory_deleted``). The conversations it was drawn from stay: they are the person's own words."""
    owner_id, uris, earlier = memory.owner_id, [memory.uri], []
    replaced = list(Memory.objects.filter(superseded_by=memory).only("id", "owner_id", "category"))
    while replaced:  # each earlier version is a memory of the same fact, with its own earlier texts
        uris += [older.uri for older in replaced]
        earlier += [older.pk for older in replaced]
        replaced = list(
            Memory.objects.filter(superseded_by__in=replaced).exclude(pk__in=earlier).only("id", "owner_id", "category")
        )
    Memory.objects.filter(pk__in=[*earlier, memory.pk]).delete()
    needles = Needles(whole=tuple(uris))
    messages_forget(owner_id=owner_id, needles=needles)
    memory_deleted.send(sender=Memory, owner_id=owner_id, needles=needles)


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
    said = reread = message.content
    family: dict[str, str] = {}
    # "Mei is vegetarian.", said of the sister they named before, is read as "my sister Mei is vegetarian.".
    if extraction.names_someone(said):
        family = memory_family_names(owner_id=session.owner_id, agent_id=session.agent_id)
        reread = extraction.with_kin_named(said, family)
    # Most turns state nothing the patterns know: they cost no query.
    if not extract_by_patterns([(message.role, reread)]):
        return empty_diff()
    with transaction.atomic():
        known = _known_to_the_session(session)
        content = _strip_known_text(said, known)
        candidates = extract_by_patterns([(message.role, content)]) if content else []
        if reread != said:
            rest = _strip_known_text(reread, known)
            candidates = extraction.said_of_kin(candidates, extract_by_patterns([(message.role, rest)]), family)
        if not candidates:
            return empty_diff()
        memories, diff = memory_upsert(
            owner_id=session.owner_id,
            agent_id=session.agent_id,
            archive=None,
            candidates=[(candidate, [message]) for candidate in candidates],
        )
        unembedded = [memory.id for memory in memories if memory.embedding is None]
        embed_later(kind="memories", ids=unembedded)
    _embed_now(unembedded)
    return diff


def _embed_now(memory_ids: list[int]) -> None:
    """Gives the memories a turn just noted their vectors before it answers (a few short texts: a few
    milliseconds of the model). The next question may come at once (an agent does not pause to read)
    and ask in other words ("what should I avoid eating?" of "Is allergic to peanuts."), which only their
    meaning finds; a worker busy with an upload may take seconds to get to them. The job queued for them
    stays, and finds them done; if the model fails here, it is what embeds them."""
    if not memory_ids:
        return
    try:
        embedding.embed_ids(kind="memories", ids=memory_ids)
    except Exception:  # the memories are stored and announced whatever happens here
        logger.warning("could not embed the memories just noted; a worker will", exc_info=True)
