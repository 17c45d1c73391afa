"""Commit: a session's live turns become an archive with its L0 abstract and L1 overview, and the
long-term memories found in them are merged into the owner's."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.db.models import Max
from django.utils import timezone

from foundation import ai
from foundation.accounting import calls_for_session
from foundation.push import push_on_commit
from foundation.tasks import embed_later
from sessions_app.models import Archive, ChatSession, Memory, Message
from sessions_app.services.memories import empty_diff, memory_extract_and_upsert
from sessions_app.services.sessions import fresh, lock_commits
from sessions_app.uris import archive_uri

# The event a person's open pages receive when one of their sessions is committed.
COMMIT_EVENT = "commit"


@dataclass
class CommitResult:
    archive: Archive | None
    memories: list[Memory]
    memory_diff: dict[str, list[dict[str, Any]]]
    committed: bool
    reason: str = ""


def session_commit(*, session: ChatSession, keep_recent: int = 0) -> CommitResult:
    """Archives the session's uncommitted turns, but the last ``keep_recent``, with an L0 abstract and
    an L1 overview, and extracts long-term memories from them.

    Commits of one session run one after the other (the second finds nothing new, so no message is
    archived twice or lost), while new messages keep being recorded: they come after the turns being
    archived and wait for the next commit.
    """
    with transaction.atomic(), calls_for_session(session.pk):
        lock_commits(session.pk)
        locked = fresh(session)
        pending = list(Message.objects.filter(session=locked, archive__isnull=True).order_by("seq"))
        if keep_recent > 0:
            pending = pending[:-keep_recent] if len(pending) > keep_recent else []
        if not pending:
            return CommitResult(
                archive=None,
                memories=[],
                memory_diff=empty_diff(),
                committed=False,
                reason="Nothing new to commit: every turn is already archived or kept live.",
            )
        engine = ai.text_engine()
        turns = [
            ai.Turn(role=m.role, content=m.content, derived=m.is_derived)
            for m in pending
            if m.role != Message.Role.SYSTEM
        ]
        overview = engine.overview(turns, owner_id=locked.owner_id) if ai.spoken(turns) else ai.Overview()
        index = (Archive.objects.filter(session=locked).aggregate(last=Max("index"))["last"] or 0) + 1
        archive = Archive.objects.create(
            session=locked,
            owner_id=locked.owner_id,
            agent_id=locked.agent_id,
            index=index,
            uri=archive_uri(locked.id, index),
            first_seq=pending[0].seq,
            last_seq=pending[-1].seq,
            message_count=len(pending),
            abstract=overview.abstract,
            overview=overview.as_text(),
            overview_data=overview.as_dict(),
        )
        Message.objects.filter(id__in=[m.id for m in pending]).update(archive=archive)
        ChatSession.objects.filter(pk=locked.pk).update(committed_at=timezone.now(), updated_at=timezone.now())
        memories, diff = memory_extract_and_upsert(session=locked, archive=archive, messages=pending, engine=engine)
        archive_id, memory_ids = archive.id, [m.id for m in memories if m.embedding is None]
        embed_later(kind="archives", ids=[archive_id])
        embed_later(kind="memories", ids=memory_ids)
        # An auto-commit runs in a worker: the person's open pages learn what was remembered.
        summary = {"session_id": str(locked.id), "archive_uri": archive.uri, "abstract": archive.abstract}
        push_on_commit(locked.owner_id, COMMIT_EVENT, lambda: {**summary, "memory_diff": diff})
    return CommitResult(archive=archive, memories=memories, memory_diff=diff, committed=True)
