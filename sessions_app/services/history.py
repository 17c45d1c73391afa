"""The rolling summary: what a model is handed of a session stays bounded however long it grows."""

from __future__ import annotations

import logging

from django.conf import settings
from django.utils import timezone

from foundation import ai
from foundation.accounting import calls_for_session
from sessions_app.models import ChatSession, Message
from sessions_app.selectors import HistoryContext, history_tokens, history_window

logger = logging.getLogger(__name__)


FOLD_BATCH = 200


def session_history_context(*, session: ChatSession) -> HistoryContext:
    """The session's history, bounded whatever its length.

    The last HISTORY_MAX_TURNS turns within HISTORY_TOKEN_BUDGET stay verbatim. Older turns are folded
    into the rolling summary only when the verbatim turns overflow, and then just those that no longer
    fit, so the window always holds as many of the latest turns as it can. The summary and its
    watermark are stored before any turn leaves the verbatim window; if summarising fails, the window
    stays as it was.
    """
    max_turns, budget = settings.HISTORY_MAX_TURNS, settings.HISTORY_TOKEN_BUDGET
    if not settings.ENABLE_HISTORY_SUMMARIZATION:
        recent = list(reversed(Message.objects.filter(session=session).defer("embedding").order_by("-seq")[:max_turns]))
        return HistoryContext(
            summary="", turns=history_window(recent, max_turns=max_turns, budget=budget), summary_through_seq=0
        )

    for _attempt in range(2):
        watermark, summary = session.summary_through_seq, session.rolling_summary
        unsummarized = list(
            Message.objects.filter(session=session, seq__gt=watermark).defer("embedding").order_by("seq")
        )
        fits = len(unsummarized) <= max_turns and sum(history_tokens(m) for m in unsummarized) <= budget
        if fits:
            return HistoryContext(summary=summary, turns=unsummarized, summary_through_seq=watermark)
        keep = history_window(unsummarized, max_turns=max_turns, budget=budget)
        to_fold = unsummarized[: len(unsummarized) - len(keep)]
        try:
            engine = ai.text_engine()
            with calls_for_session(session.pk):
                for start in range(0, len(to_fold), FOLD_BATCH):
                    batch = [m for m in to_fold[start : start + FOLD_BATCH] if not m.is_derived]
                    summary = engine.summarize(
                        [ai.Turn(role=m.role, content=m.content) for m in batch],
                        previous=summary,
                        max_words=settings.ROLLING_SUMMARY_MAX_WORDS,
                        owner_id=session.owner_id,
                    )
        except Exception as exc:  # nothing is dropped: the caller gets every unsummarized turn
            logger.exception("rolling summary of session %s failed", session.id)
            return HistoryContext(
                summary=session.rolling_summary, turns=unsummarized, summary_through_seq=watermark, error=str(exc)
            )
        new_watermark = to_fold[-1].seq
        # Stored only if no other process folded meanwhile; otherwise start again from its summary.
        stored = ChatSession.objects.filter(pk=session.pk, summary_through_seq=watermark).update(
            rolling_summary=summary, summary_through_seq=new_watermark, summary_updated_at=timezone.now()
        )
        if stored:
            session.rolling_summary, session.summary_through_seq = summary, new_watermark
            return HistoryContext(summary=summary, turns=keep, summary_through_seq=new_watermark, folded=len(to_fold))
        session.refresh_from_db(fields=["rolling_summary", "summary_through_seq", "summary_updated_at"])
    return HistoryContext(
        summary=session.rolling_summary, turns=unsummarized, summary_through_seq=session.summary_through_seq
    )
