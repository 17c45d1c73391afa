"""The rows of this app that carry a vector, and the text each vector is made from."""

from __future__ import annotations

from retrieval_app.core.embedding import Embeddable
from sessions_app.models import Archive, Memory, Message


def message_text(message: Message) -> str:
    return message.content


def archive_text(archive: Archive) -> str:
    return f"{archive.abstract}\n{archive.overview}"


def memory_text(memory: Memory) -> str:
    return f"{memory.key.replace('_', ' ')}: {memory.content}"


EMBEDDABLES = (
    Embeddable("messages", Message.objects.all, message_text, ("content",), "message_embedding"),
    Embeddable("archives", Archive.objects.all, archive_text, ("abstract", "overview"), "archive_embedding"),
    Embeddable(
        "memories",
        lambda: Memory.objects.filter(superseded_by__isnull=True),
        memory_text,
        ("key", "content"),
        "memory_embedding",
    ),
)
