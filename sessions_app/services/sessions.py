"""Sessions: create, rename, delete; and the two locks every write of a session relies on."""

from __future__ import annotations

from django.db import connection, transaction
from django.db.models import Q

from foundation import task_names
from foundation.accounting import model_calls_forget_session
from foundation.queues import queued_tasks_forget
from foundation.scrub import Needles
from sessions_app.exceptions import SessionNotFound
from sessions_app.models import Archive, ChatSession, Memory, Message
from sessions_app.services.forgetting import memories_forget_history, messages_forget
from sessions_app.services.working_set import working_set_clear
from sessions_app.signals import session_deleted


def lock_commits(session_id) -> None:
    """Serialises commits (and deletes) of one session for the rest of the transaction.

    An advisory lock rather than the session row: appends lock the row only for an instant, and must
    not wait behind a commit's model calls.
    """
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(hashtextextended(%s, 0))", [f"commit:{session_id}"])


def fresh(session: ChatSession) -> ChatSession:
    """The session as stored now; SessionNotFound if it was deleted meanwhile."""
    try:
        return ChatSession.objects.get(pk=session.pk)
    except ChatSession.DoesNotExist as exc:
        raise SessionNotFound() from exc


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
    alone. A memory also drawn from another session stays, without this session's sources. What other
    rows kept of it goes too: the words other answers cite from it, the search traces of other sessions
    that quote it (``session_deleted``), its model calls' link to it, and its working set."""
    lock_commits(session.pk)  # a commit in flight finishes first, so its memories are seen here
    owner_id = session.owner_id
    from_here = Memory.objects.filter(owner_id=owner_id).filter(
        Q(source_archive__session=session) | Q(source_messages__session=session)
    )
    elsewhere = Memory.objects.filter(owner_id=owner_id).filter(
        Q(source_messages__in=Message.objects.filter(owner_id=owner_id).exclude(session=session))
        | Q(source_archive__in=Archive.objects.filter(owner_id=owner_id).exclude(session=session))
    )
    alone = Memory.objects.filter(id__in=from_here.values("id")).exclude(id__in=elsewhere.values("id"))
    gone = [memory.uri for memory in alone.only("id", "owner_id", "category")]
    alone.delete()
    session_id = str(session.pk)  # read before the delete, which clears the instance's primary key
    session.delete()
    model_calls_forget_session(session_id=session_id)
    queued_tasks_forget(tasks=task_names.SESSION_JOBS, first_arg=session_id)
    needles = Needles(inside=(session_id,), whole=tuple(gone))
    messages_forget(owner_id=owner_id, needles=needles)
    memories_forget_history(owner_id=owner_id, needles=needles)
    session_deleted.send(sender=ChatSession, owner_id=owner_id, needles=needles)
    working_set_clear(session_id=session_id)
