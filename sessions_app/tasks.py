"""Celery tasks of sessions and memory: they take ids, re-fetch rows and are idempotent. (Embedding
jobs are the foundation's, for every kind of row: ``foundation.tasks``.)"""

from __future__ import annotations

from celery import shared_task
from django.conf import settings

from foundation import task_names
from sessions_app import services
from sessions_app.exceptions import SessionNotFound
from sessions_app.models import ChatSession


@shared_task(name=task_names.SESSION_AUTO_COMMIT)
def session_auto_commit(session_id: str) -> bool:
    """Commits a session whose uncommitted turns reached AUTO_COMMIT_TURNS, keeping the last
    HISTORY_MAX_TURNS live. A no-op if another commit got there first."""
    session = ChatSession.objects.filter(id=session_id).first()
    if session is None:
        return False
    try:
        return services.session_commit(session=session, keep_recent=settings.HISTORY_MAX_TURNS).committed
    except SessionNotFound:  # deleted meanwhile: nothing left to commit
        return False


@shared_task(name=task_names.SESSION_FOLD_HISTORY)
def session_fold_history(session_id: str) -> int:
    """Folds a session's turns older than the verbatim window into its rolling summary (a no-op while
    the window has room, or once another fold got there first). Returns the turns folded."""
    session = ChatSession.objects.filter(id=session_id).first()
    return services.session_history_context(session=session).folded if session else 0


@shared_task(name=task_names.SESSION_AUTO_COMMIT_BULK)
def session_auto_commit_bulk(session_id: str) -> bool:
    """``session_auto_commit`` after a bulk write, on the bulk workers."""
    return session_auto_commit(session_id)


@shared_task(name=task_names.SESSION_FOLD_HISTORY_BULK)
def session_fold_history_bulk(session_id: str) -> int:
    """``session_fold_history`` after a bulk write, on the bulk workers."""
    return session_fold_history(session_id)
