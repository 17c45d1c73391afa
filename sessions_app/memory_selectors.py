"""Reads of memories as the API shows them: those of ``selectors``, each with the conversation a person
follows it back to. That is its archive's session, else the session of the turn it was first drawn from (a
memory noted during a chat has no archive yet); a memory with neither was added by hand."""

from __future__ import annotations

from django.db.models import OuterRef, QuerySet, Subquery

from sessions_app import selectors
from sessions_app.models import Memory, Message


def _with_source_session(memories: QuerySet[Memory]) -> QuerySet[Memory]:
    """Adds ``source_session_id``: the session of ``source_message_id``, read in the same query."""
    turn = Message.objects.filter(pk=OuterRef("source_message_id")).values("session_id")[:1]
    return memories.annotate(source_session_id=Subquery(turn))


def memory_list(*, owner, category: str | None = None, agent_id: str | None = None, q: str = "") -> QuerySet[Memory]:
    return _with_source_session(selectors.memory_list(owner=owner, category=category, agent_id=agent_id, q=q))


def memory_get(*, owner, memory_id: int | str) -> Memory:
    """One of the owner's memories with the session it came from; MemoryNotFound for anyone else's."""
    memory = selectors.memory_get(owner=owner, memory_id=memory_id)
    turn = Message.objects.filter(pk=memory.source_message_id).values_list("session_id", flat=True)
    memory.source_session_id = turn.first() if memory.source_message_id else None
    return memory
