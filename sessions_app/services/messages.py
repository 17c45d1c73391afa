"""Recording messages: as given, in order, without calling any model."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime

from django.conf import settings
from django.db import connection, transaction
from django.utils import timezone

from foundation import ai, task_names
from foundation.queues import enqueue_on_commit
from foundation.tasks import embed_later, is_bulk_write
from sessions_app.exceptions import ExchangeAlreadyCommitted, SessionNotFound
from sessions_app.models import ChatSession, Message
from sessions_app.selectors import session_last_exchange
from sessions_app.services.sessions import lock_commits


@dataclass(frozen=True)
class NewMessage:
    role: str
    content: str
    created_at: datetime | None = None
    metadata: dict = field(default_factory=dict)


def message_bulk_create(
    *, session: ChatSession, messages: Sequence[NewMessage], keep_folded: bool = False
) -> list[Message]:
    """Records messages as given, in order, after the session's last one. No model is called: the
    embeddings are made by a worker once the rows are committed, and a failure there loses nothing.

    A session written through the API is folded into its rolling summary by a worker once its
    unsummarized turns reach twice the verbatim window. ``keep_folded`` (a chat recording its answer)
    has the worker fold as soon as the window overflows, so the history a model or a person reads next
    holds every turn, in the summary or verbatim, without the next turn waiting for the summariser."""
    now = timezone.now()
    newest = max(item.created_at or now for item in messages)
    with transaction.atomic():
        # Updating the session row first locks it: appends run one after the other, so sequence
        # numbers never collide.
        if not _session_touch(session_id=session.pk, newest=newest, now=now):  # deleted by another request meanwhile
            raise SessionNotFound()
        last_seq, live = _session_tail(session_id=session.pk)
        rows = [
            Message(
                session=session,
                owner_id=session.owner_id,
                agent_id=session.agent_id,
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
        # What the product wrote itself (an answer quoting passages, a system turn) is never embedded: a job
        # for it would cost a publish here and a task in a worker for nothing.
        embed_later(kind="messages", ids=[row.id for row in rows if not row.is_derived])
        _session_jobs_queue(
            session=session, last_seq=rows[-1].seq, live=live + len(rows), bulk=is_bulk_write(len(rows)),
            keep_folded=keep_folded,
        )  # fmt: skip
    if session.last_message_at is None or newest > session.last_message_at:
        session.last_message_at = newest
    return rows


def _session_jobs_queue(*, session: ChatSession, last_seq: int, live: int, bulk: bool, keep_folded: bool) -> None:
    """Queues, once the transaction commits, what a session with ``live`` messages in no archive, the last
    numbered ``last_seq``, now needs: its automatic commit, and folding its history into the summary."""
    if settings.AUTO_COMMIT_TURNS and live >= settings.AUTO_COMMIT_TURNS:
        commit = task_names.SESSION_AUTO_COMMIT_BULK if bulk else task_names.SESSION_AUTO_COMMIT
        enqueue_on_commit(commit, str(session.pk))
    fold_at = settings.HISTORY_MAX_TURNS + 1 if keep_folded else 2 * settings.HISTORY_MAX_TURNS
    if settings.ENABLE_HISTORY_SUMMARIZATION and last_seq - session.summary_through_seq >= fold_at:
        fold = task_names.SESSION_FOLD_HISTORY_BULK if bulk else task_names.SESSION_FOLD_HISTORY
        enqueue_on_commit(fold, str(session.pk))


def message_jobs_requeue(*, session: ChatSession, keep_folded: bool = False) -> None:
    """Queues again what appending a few messages (a chat's answer, say) to the session queued, with
    ``keep_folded`` as that append had it: for a write that committed although its caller never learnt it
    (the connection went with the acknowledgement), whose jobs went with it. The jobs are idempotent: one
    that ran already finds nothing left to do."""
    with transaction.atomic():
        last_seq, live = _session_tail(session_id=session.pk)
        _session_jobs_queue(session=session, last_seq=last_seq, live=live, bulk=False, keep_folded=keep_folded)


# Every turn appends twice (the question, then the answer): these two statements are written out, since
# building them through the ORM cost several times what PostgreSQL takes to run them.
_TOUCH_SQL = (
    f"UPDATE {ChatSession._meta.db_table} SET last_message_at = GREATEST(COALESCE(last_message_at, %s), %s),"  # noqa: S608
    " updated_at = %s WHERE id = %s"
)
_TAIL_SQL = (
    "SELECT MAX(seq), COUNT(*) FILTER (WHERE archive_id IS NULL)"  # noqa: S608
    f" FROM {Message._meta.db_table} WHERE session_id = %s"
)


def _session_touch(*, session_id, newest: datetime, now: datetime) -> bool:
    """Moves the session's last activity on (never back) and locks its row until the transaction ends;
    False if the session is gone."""
    with connection.cursor() as cursor:
        cursor.execute(_TOUCH_SQL, (newest, newest, now, session_id))
        return cursor.rowcount > 0


def _session_tail(*, session_id) -> tuple[int, int]:
    """The session's last sequence number (0 with none) and how many of its messages are live (in no archive)."""
    with connection.cursor() as cursor:
        cursor.execute(_TAIL_SQL, (session_id,))
        last, live = cursor.fetchone()
    return last or 0, live


def message_exchange_replace(*, session: ChatSession, question: NewMessage) -> list[Message]:
    """Regenerate and edit-and-resend: the session's last question and its answers give way to
    ``question``, so the conversation reads as if it had been asked so in the first place (after a
    reload, in its history, in search). An exchange already in an archive stays: its memories and
    summary were drawn from it. With no question yet, ``question`` is simply recorded."""
    with transaction.atomic():
        lock_commits(session.pk)  # a commit cannot archive the exchange while it is being replaced
        ChatSession.objects.select_for_update().filter(pk=session.pk).first()
        retracted = list(session_last_exchange(session=session).only("id", "seq", "archive_id"))
        if any(message.archive_id for message in retracted):
            raise ExchangeAlreadyCommitted()
        if retracted:
            Message.objects.filter(id__in=[message.id for message in retracted]).delete()
            first_seq = retracted[0].seq
            # A rolling summary that already folded these turns in would go on quoting them: it is
            # started again and folded afresh from what is left.
            if ChatSession.objects.filter(pk=session.pk, summary_through_seq__gte=first_seq).update(
                rolling_summary="", summary_through_seq=0, summary_updated_at=None
            ):
                # The turn goes on with this session: its history must not read the summary just dropped.
                session.rolling_summary, session.summary_through_seq, session.summary_updated_at = "", 0, None
        return message_bulk_create(session=session, messages=[question])
