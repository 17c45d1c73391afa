"""Celery tasks of sessions and memory: they take ids, re-fetch rows and are idempotent."""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from retrieval_app.ai import EmbeddingError
from retrieval_app.services import embed_rows
from sessions_app.models import Archive, ChatSession, Memory, Message

RETRY = {"autoretry_for": (EmbeddingError,), "retry_backoff": 5, "retry_backoff_max": 300, "max_retries": 6}


def message_text(message: Message) -> str:
    return message.content


def archive_text(archive: Archive) -> str:
    return f"{archive.abstract}\n{archive.overview}"


def memory_text(memory: Memory) -> str:
    return f"{memory.key.replace('_', ' ')}: {memory.content}"


MESSAGE_FIELDS, ARCHIVE_FIELDS, MEMORY_FIELDS = ("content",), ("abstract", "overview"), ("key", "content")


def embeddable() -> list[tuple[str, object, object, tuple[str, ...]]]:
    """Every embedded kind of this app: its name, its rows, the text its vector is made from, and the
    fields that text comes from."""
    return [
        ("messages", Message.objects.all(), message_text, MESSAGE_FIELDS),
        ("archives", Archive.objects.all(), archive_text, ARCHIVE_FIELDS),
        ("memories", Memory.objects.filter(superseded_by__isnull=True), memory_text, MEMORY_FIELDS),
    ]


@shared_task(**RETRY)
def embed_messages(message_ids: list[int]) -> int:
    return embed_rows(
        queryset=Message.objects.filter(id__in=message_ids),
        text_of=message_text,
        text_fields=MESSAGE_FIELDS,
        purpose="message_embedding",
    )


@shared_task(**RETRY)
def embed_archives(archive_ids: list[int]) -> int:
    return embed_rows(
        queryset=Archive.objects.filter(id__in=archive_ids),
        text_of=archive_text,
        text_fields=ARCHIVE_FIELDS,
        purpose="archive_embedding",
    )


@shared_task(**RETRY)
def embed_memories(memory_ids: list[int]) -> int:
    return embed_rows(
        queryset=Memory.objects.filter(id__in=memory_ids),
        text_of=memory_text,
        text_fields=MEMORY_FIELDS,
        purpose="memory_embedding",
    )


@shared_task(**RETRY)
def backfill_embeddings(batch_size: int = 64, restale: bool = False) -> dict[str, int]:
    """Embeds every message, archive and memory still without a vector from the configured model."""
    return {
        name: embed_rows(
            queryset=rows,
            text_of=text_of,
            text_fields=fields,
            purpose="backfill",
            batch_size=batch_size,
            restale=restale,
        )
        for name, rows, text_of, fields in embeddable()
    }


@shared_task
def session_auto_commit(session_id: str) -> bool:
    """Commits a session whose uncommitted turns reached AUTO_COMMIT_TURNS, keeping the last
    HISTORY_MAX_TURNS live. A no-op if another commit got there first."""
    from sessions_app.exceptions import SessionNotFound
    from sessions_app.services import session_commit

    session = ChatSession.objects.filter(id=session_id).first()
    if session is None:
        return False
    try:
        return session_commit(session=session, keep_recent=settings.HISTORY_MAX_TURNS).committed
    except SessionNotFound:  # deleted meanwhile: nothing left to commit
        return False
