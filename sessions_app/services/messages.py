"""Recording messages: as given, in order, without calling any model."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from retrieval_app.core import ai
from retrieval_app.core.queues import enqueue_on_commit
from retrieval_app.core.tasks import embed_later
from sessions_app.models import ChatSession, Message
from sessions_app.services.sessions import fresh

# Message metadata marking text the product itself put into a conversation (recalled memories,
# summaries, retrieved passages): it is context, never a new fact about the user.
INJECTED_SOURCES = frozenset({"recall", "memory", "memories", "summary", "context", "retrieval"})
# The worker job that commits a session whose live turns reached AUTO_COMMIT_TURNS (sessions_app.tasks).
AUTO_COMMIT_TASK = "sessions.auto_commit"


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
        locked = fresh(session, lock_row=True)
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
        embed_later(kind="messages", ids=ids)
        if settings.AUTO_COMMIT_TURNS:
            pending = Message.objects.filter(session=locked, archive__isnull=True).count()
            if pending >= settings.AUTO_COMMIT_TURNS:
                enqueue_on_commit(AUTO_COMMIT_TASK, session_id)
    session.last_message_at = locked.last_message_at
    return rows


def is_injected(message: Message) -> bool:
    """Text the product itself put into the conversation: system turns and marked context."""
    metadata = message.metadata or {}
    return (
        message.role == Message.Role.SYSTEM
        or bool(metadata.get("injected"))
        or str(metadata.get("source", "")).lower() in INJECTED_SOURCES
    )
