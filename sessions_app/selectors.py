"""Reads of sessions and memory, always scoped to one owner."""

from __future__ import annotations

import uuid

from django.db.models import QuerySet
from django.db.models.functions import Coalesce

from sessions_app.exceptions import SessionNotFound
from sessions_app.models import ChatSession


def session_list(*, owner, agent_id: str | None = None) -> QuerySet[ChatSession]:
    """The owner's sessions, newest activity first (the order the activity index serves)."""
    sessions = ChatSession.objects.filter(owner=owner)
    if agent_id is not None:
        sessions = sessions.filter(agent_id=agent_id)
    return sessions.order_by(Coalesce("last_message_at", "created_at").desc(), "-id")


def session_get(*, owner, session_id: uuid.UUID | str) -> ChatSession:
    """The owner's session; another user's session is indistinguishable from a missing one."""
    try:
        return ChatSession.objects.get(owner=owner, id=uuid.UUID(str(session_id)))
    except (ValueError, ChatSession.DoesNotExist) as exc:
        raise SessionNotFound() from exc
