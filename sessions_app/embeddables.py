"""The rows of this app that carry a vector, and the text each vector is made from."""

from __future__ import annotations

from django.conf import settings
from django.db.models import Q

from foundation.ai.memories import EMBEDDED_WITH_THE_FACT, implication, label
from foundation.embedding import Embeddable
from sessions_app.models import Archive, Memory, Message

PREVIOUS_TURN_CHARS = 300
SHORT_TURN_WORDS = 25


def message_text(message: Message) -> str:
    return message.content


def _speaker(message: Message) -> str:
    return str((message.metadata or {}).get("speaker") or message.role)


def message_texts(messages: list[Message]) -> list[str]:
    """What a message's vector is made from: a turn alone ("Yes, last Tuesday!") says little, so a
    short one is represented with the turn it answers, and one whose speaker is named
    (``metadata.speaker``) with that name and its date (MESSAGE_CONTEXT). Its ``content`` stays
    exactly as written."""
    context = settings.MESSAGE_CONTEXT
    if context == "none":
        return [message.content for message in messages]
    previous: dict[tuple, Message] = {}
    if context in ("previous", "full"):
        wanted = Q(pk__in=[])
        for message in messages:
            wanted |= Q(session_id=message.session_id, seq=message.seq - 1)
        previous = {(m.session_id, m.seq): m for m in Message.objects.filter(wanted).defer("embedding")}
    texts = []
    for message in messages:
        text = message.content
        name = (message.metadata or {}).get("speaker")
        if context in ("speaker", "full") and name:
            # A person's name is what questions about them ask by; "user" and "assistant" say nothing.
            text = f"{name} ({message.created_at:%d %B %Y}): {text}"
        before = previous.get((message.session_id, message.seq - 1))
        # A long turn says enough by itself; a short one ("Yes, last Tuesday!") needs what it answers.
        if before is not None and not before.is_derived and len(message.content.split()) < SHORT_TURN_WORDS:
            text += f"\nIn reply to {_speaker(before)}: {before.content[:PREVIOUS_TURN_CHARS]}"
        texts.append(text)
    return texts


def archive_text(archive: Archive) -> str:
    return f"{archive.abstract}\n{archive.overview}"


def memory_text(memory: Memory) -> str:
    """A memory as its vector sees it: its label, its sentence, and what its kind of fact means for the
    person when its words do not say it (a question about what to avoid eating is close to a peanut
    allergy only once "a food to avoid eating" is said with it)."""
    said = f"{label(memory.key, memory.content)}: {memory.content}"
    implied = implication(memory.category, memory.key)
    return f"{said} {implied}" if implied in EMBEDDED_WITH_THE_FACT else said


EMBEDDABLES = (
    Embeddable(
        "messages",
        # What the product wrote itself (quotes of passages, summaries, system turns) is left out of recall,
        # so a vector of it would only cost a worker's time and crowd the vector index: a built-in answer
        # given again and again is as many identical vectors, among which a filtered index scan can end
        # without a row it may return.
        Message.objects.said,
        message_text,
        ("content",),
        "message_embedding",
        message_texts,
        written_at="created_at",
    ),
    Embeddable(
        "archives",
        Archive.objects.all,
        archive_text,
        ("abstract", "overview"),
        "archive_embedding",
        written_at="created_at",
    ),
    Embeddable(
        "memories",
        lambda: Memory.objects.filter(superseded_by__isnull=True),
        memory_text,
        ("key", "content"),
        "memory_embedding",
        written_at="updated_at",
    ),
)
