"""Reads of sessions and memory, always scoped to one owner."""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVector
from django.db.models import (
    BooleanField,
    Count,
    Exists,
    ExpressionWrapper,
    F,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
)
from django.db.models.functions import Coalesce

from retrieval_app.core.ai.tokens import CHARS_PER_TOKEN, estimate_tokens
from retrieval_app.core.text import TEXT_SEARCH_CONFIG
from retrieval_app.core.vectors import cosine_distance
from sessions_app.exceptions import MemoryNotFound, SessionNotFound
from sessions_app.models import Archive, ChatSession, Memory, Message

logger = logging.getLogger(__name__)

# Archive summaries are joined with a rule between them, keeping their boundaries visible.
SUMMARY_SEPARATOR = "\n\n---\n\n"


def session_list(*, owner, agent_id: str | None = None, q: str = "") -> QuerySet[ChatSession]:
    """The owner's sessions, newest activity first (the order the activity indexes serve).

    ``q`` keeps the sessions whose title contains it, or where someone said words matching it
    (full-text, so "exports" finds "export"), the way a person searches their conversations. Passages
    the product quoted into a chat are not what was said there: a chat that merely quoted a manual
    about descaling is not a conversation about descaling."""
    sessions = ChatSession.objects.filter(owner=owner)
    if agent_id is not None:
        sessions = sessions.filter(agent_id=agent_id)
    if q.strip():
        said = Message.objects.said().filter(
            session=OuterRef("pk"),
            search_vector=SearchQuery(q.strip(), search_type="websearch", config=TEXT_SEARCH_CONFIG),
        )
        sessions = sessions.filter(Q(title__icontains=q.strip()) | Exists(said))
    # A correlated count runs for the page's rows only, where a join would group every message.
    counts = Message.objects.filter(session=OuterRef("pk")).order_by().values("session").annotate(n=Count("*"))
    return sessions.annotate(message_count=Coalesce(Subquery(counts.values("n")), 0)).order_by(
        Coalesce("last_message_at", "created_at").desc(), "-id"
    )


def session_get(*, owner, session_id: uuid.UUID | str) -> ChatSession:
    """The owner's session; another user's session is indistinguishable from a missing one."""
    try:
        return ChatSession.objects.get(owner=owner, id=uuid.UUID(str(session_id)))
    except (ValueError, ChatSession.DoesNotExist) as exc:
        raise SessionNotFound() from exc


def session_messages(*, session: ChatSession) -> QuerySet[Message]:
    return (
        Message.objects.filter(session=session)
        .select_related("archive")
        .defer("embedding", "archive__embedding")
        .annotate(embedded=ExpressionWrapper(Q(embedding__isnull=False), output_field=BooleanField()))
        .order_by("seq")
    )


def session_archives(*, session: ChatSession) -> QuerySet[Archive]:
    return Archive.objects.filter(session=session).defer("embedding").order_by("index")


# --- Session context for search -------------------------------------------------------------------------


def _or_query(text: str) -> str:
    """Any of the query's words (websearch syntax; PostgreSQL drops stopwords and stems the rest)."""
    words = re.findall(r"[^\W_]{2,}", text)[:32]
    return " or ".join(words)


def _ranked_overviews(
    *, session: ChatSession, query: str, limit: int, query_vector: Sequence[float] | None, query_model: str
) -> list[str]:
    """Archive overviews most relevant to ``query``, in one query: by vector similarity for archives
    embedded by the model that embedded the query, then by full-text rank, then newest first."""
    if limit <= 0:
        return []
    archives = Archive.objects.filter(session=session).exclude(overview="")
    order = []
    if query.strip():
        if query_vector is not None:
            archives = archives.annotate(distance=cosine_distance(query_vector, query_model))
            order.append(F("distance").asc(nulls_last=True))
        tsquery = SearchQuery(_or_query(query), search_type="websearch", config=TEXT_SEARCH_CONFIG)
        archives = archives.annotate(
            rank=SearchRank(SearchVector("overview", "abstract", config=TEXT_SEARCH_CONFIG), tsquery)
        )
        order.append(F("rank").desc())
    return list(archives.order_by(*order, "-index").values_list("overview", flat=True)[:limit])


def session_context_for_search(
    *,
    session: ChatSession,
    query: str = "",
    max_archives: int = 3,
    max_messages: int = 20,
    query_vector: Sequence[float] | None = None,
    query_model: str = "",
) -> dict[str, Any]:
    """The session context a search is handed: ``{summary, summaries, recent_messages}``.

    ``summaries`` are the archive overviews most relevant to the query, best first; ``summary`` is
    them joined in that order; ``recent_messages`` are the latest live (uncommitted) turns, oldest first.
    """
    summaries = _ranked_overviews(
        session=session, query=query, limit=max_archives, query_vector=query_vector, query_model=query_model
    )
    recent = list(
        Message.objects.filter(session=session, archive__isnull=True)
        .order_by("-seq")
        .values("id", "seq", "role", "content", "created_at", "metadata")[: max(0, max_messages)]
    )
    return {
        "summary": SUMMARY_SEPARATOR.join(summaries),
        "summaries": summaries,
        "recent_messages": list(reversed(recent)),
    }


def session_summary_text(context: dict[str, Any] | None) -> str:
    """The archive summary a search takes from a session context: its ``summary`` when present and
    non-empty, else its ``summaries`` joined, else nothing."""
    if not context:
        return ""
    summary = context.get("summary")
    if isinstance(summary, str) and summary.strip():
        return summary
    summaries = [s for s in context.get("summaries") or [] if isinstance(s, str) and s.strip()]
    return SUMMARY_SEPARATOR.join(summaries)


@dataclass
class HistoryContext:
    """What a model is handed of a session: a rolling summary of older turns, then recent turns verbatim."""

    summary: str
    turns: list[Message]
    summary_through_seq: int
    folded: int = 0
    error: str = ""
    # Turns older than the verbatim window not yet folded into the summary (a worker folds them).
    pending_fold: int = 0

    @property
    def token_estimate(self) -> int:
        return estimate_tokens(self.summary) + sum(estimate_tokens(_clip(t.content)) for t in self.turns)


def _clip(content: str) -> str:
    """One turn never takes more than the whole verbatim budget."""
    limit = settings.HISTORY_TOKEN_BUDGET * CHARS_PER_TOKEN
    return content if len(content) <= limit else content[: limit - 4].rstrip() + " ..."


def history_tokens(message: Message) -> int:
    return estimate_tokens(_clip(message.content))


def history_window(messages: Sequence[Message], *, max_turns: int, budget: int) -> list[Message]:
    """The newest messages that fit in ``max_turns`` and ``budget`` tokens (always the newest one)."""
    window: list[Message] = []
    used = 0
    for message in reversed(messages):
        cost = history_tokens(message)
        if window and (len(window) >= max_turns or used + cost > budget):
            break
        window.append(message)
        used += cost
    return list(reversed(window))


def session_history(*, session: ChatSession) -> HistoryContext:
    """The session's history as stored, without folding anything: the rolling summary, then the newest
    turns after its watermark that fit the verbatim window (HISTORY_MAX_TURNS, HISTORY_TOKEN_BUDGET).
    Turns between the two are counted in ``pending_fold``; a worker folds them once the live turns
    reach twice the window, and every chat turn folds before it is answered."""
    max_turns, budget = settings.HISTORY_MAX_TURNS, settings.HISTORY_TOKEN_BUDGET
    summarizing = settings.ENABLE_HISTORY_SUMMARIZATION
    watermark = session.summary_through_seq if summarizing else 0
    newest = Message.objects.filter(session=session, seq__gt=watermark).defer("embedding").order_by("-seq")
    turns = history_window(list(reversed(newest[:max_turns])), max_turns=max_turns, budget=budget)
    return HistoryContext(
        summary=session.rolling_summary if summarizing else "",
        turns=turns,
        summary_through_seq=watermark,
        pending_fold=turns[0].seq - watermark - 1 if turns and summarizing else 0,
    )


# --- Memories ---------------------------------------------------------------------------------------------


def memory_source_message_ids(*, memory_ids: Sequence[int]) -> set[int]:
    """The turns these memories were drawn from, in one query (none for no memories)."""
    if not memory_ids:
        return set()
    through = Memory.source_messages.through.objects.filter(memory_id__in=list(memory_ids))
    return set(through.values_list("message_id", flat=True))


def memory_list(*, owner, category: str | None = None, agent_id: str | None = None, q: str = "") -> QuerySet[Memory]:
    """The owner's current memories by category and key; ``q`` keeps those whose key or text contain
    it, or match its words."""
    memories = _with_first_source(
        Memory.objects.filter(owner=owner, superseded_by__isnull=True)
        .select_related("source_archive")
        .defer("embedding", "source_archive__embedding")
        .order_by("category", "key")
    )
    if q.strip():
        words = SearchQuery(q.strip(), search_type="websearch", config=TEXT_SEARCH_CONFIG)
        memories = memories.filter(
            Q(content__icontains=q.strip()) | Q(key__icontains=q.strip()) | Q(search_vector=words)
        )
    if category:
        memories = memories.filter(category=category)
    if agent_id is not None:
        memories = memories.filter(agent_id=agent_id)
    return memories


def _with_first_source(memories: QuerySet[Memory]) -> QuerySet[Memory]:
    """Each memory with ``source_message_id``: the first turn its current text was drawn from (in the
    archive, and so the session, it names), else its first turn at all; a link to the very turn, read
    in the same query. ``source_session_id`` is that turn's session: the conversation a person follows
    a memory back to when it has no archive yet (noted during a chat); a memory with neither was added
    by hand."""
    sources = Memory.source_messages.through.objects.filter(memory_id=OuterRef("pk")).order_by("message_id")
    current = sources.filter(message__archive_id=OuterRef("source_archive_id"))
    return memories.annotate(
        source_message_id=Coalesce(
            Subquery(current.values("message_id")[:1]), Subquery(sources.values("message_id")[:1])
        ),
        source_session_id=Coalesce(
            Subquery(current.values("message__session_id")[:1]), Subquery(sources.values("message__session_id")[:1])
        ),
    )


def memory_get(*, owner, memory_id: int | str) -> Memory:
    try:
        return _with_first_source(Memory.objects.filter(owner=owner)).get(id=int(memory_id))
    except (ValueError, TypeError, Memory.DoesNotExist) as exc:
        raise MemoryNotFound() from exc


def session_last_exchange(*, session: ChatSession) -> QuerySet[Message]:
    """The session's last question and everything after it (its answers), oldest first."""
    last_question = (
        Message.objects.filter(session=session, role=Message.Role.USER).order_by("-seq").values("seq").first()
    )
    if last_question is None:
        return Message.objects.none()
    return Message.objects.filter(session=session, seq__gte=last_question["seq"]).order_by("seq")
