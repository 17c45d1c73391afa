"""Reads of sessions and memory, always scoped to one owner."""

from __future__ import annotations

import logging
import re
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.conf import settings
from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVector
from django.db.models import (
    BooleanField,
    Count,
    Exists,
    ExpressionWrapper,
    F,
    Max,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
)
from django.db.models.functions import Coalesce
from django.utils import timezone

from config.exceptions import InvalidInputError
from retrieval_app.core import ai, when
from retrieval_app.core.ai.tokens import CHARS_PER_TOKEN, estimate_tokens
from retrieval_app.core.bm25 import bm25_rank
from retrieval_app.core.text import TEXT_SEARCH_CONFIG, query_lexemes
from retrieval_app.core.vectors import cosine_distance, nearest_neighbours
from sessions_app.exceptions import MemoryNotFound, SessionNotFound
from sessions_app.models import Archive, ChatSession, Memory, Message

logger = logging.getLogger(__name__)

# Archive summaries are joined with a rule between them, keeping their boundaries visible.
SUMMARY_SEPARATOR = "\n\n---\n\n"


def session_list(*, owner, agent_id: str | None = None, q: str = "") -> QuerySet[ChatSession]:
    """The owner's sessions, newest activity first (the order the activity indexes serve).

    ``q`` keeps the sessions whose title contains it, or with a message matching its words (full-text,
    so "exports" finds "export"), the way a person searches their conversations."""
    sessions = ChatSession.objects.filter(owner=owner)
    if agent_id is not None:
        sessions = sessions.filter(agent_id=agent_id)
    if q.strip():
        said = Message.objects.filter(
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


# --- Cross-session recall --------------------------------------------------------------------

# Cosine similarity floors by embedding model. 0.65 suits text-embedding-3-small. The local
# MiniLM spreads related texts lower: on bench/recall_threshold.py's labelled set, 0.35 has the best F1
# and is the lowest floor with precision >= 0.9 (0.65 there would answer 16% of questions).
THRESHOLDS = {
    "all-MiniLM-L6-v2-int8": 0.35,
    "text-embedding-3-small": 0.65,
    "openai/text-embedding-3-small": 0.65,
    "text-embedding-3-large": 0.6,
    "text-embedding-ada-002": 0.8,
}
DEFAULT_THRESHOLD = 0.5


def recall_threshold() -> float:
    if settings.RECALL_SIMILARITY_THRESHOLD:
        return float(settings.RECALL_SIMILARITY_THRESHOLD)
    return THRESHOLDS.get(ai.active_embedding_model(), DEFAULT_THRESHOLD)


def _or_query(text: str) -> str:
    """Any of the query's words (websearch syntax; PostgreSQL drops stopwords and stems the rest)."""
    words = re.findall(r"[^\W_]{2,}", text)[:32]
    return " or ".join(words)


def trim_to_token_budget(messages: list[dict[str, Any]], max_tokens: int) -> list[dict[str, Any]]:
    """Whole messages while they fit; the next one cut with an ellipsis if more than
    100 characters of budget remain, else dropped."""
    result: list[dict[str, Any]] = []
    used = 0
    for message in messages:
        tokens = estimate_tokens(message["content"])
        if used + tokens > max_tokens:
            remaining_chars = (max_tokens - used) * CHARS_PER_TOKEN
            if remaining_chars > 100:
                result.append({**message, "content": message["content"][:remaining_chars] + "..."})
            break
        result.append(message)
        used += tokens
    return result


def _recall_row(message: Message, similarity: float | None, score: float) -> dict[str, Any]:
    return {
        "id": message.id,
        "session_id": str(message.session_id),
        "session_title": message.session.title,
        "role": message.role,
        "content": message.content,
        "similarity": None if similarity is None else round(similarity, 3),
        "score": round(score, 4),
        "created_at": message.created_at.isoformat(),
        "metadata": message.metadata,
    }


# How recall ranks: dense (cosine only), keyword (PostgreSQL's ts_rank, the old fallback), bm25, or a
# fusion of dense and BM25 candidates: rrf (reciprocal rank) or blend (calibrated scores).
RECALL_STRATEGIES = ("dense", "keyword", "bm25", "rrf", "blend")
RRF_K = 60


def recall_scope(*, owner, agent_id: str | None = None, exclude_session_id: str | None = None) -> QuerySet[Message]:
    """The messages recall searches: the owner's (and agent's), but the excluded session's and text
    the product itself wrote into conversations (``Message.is_derived``): recalling that would echo
    the product's own earlier answers back as if someone had said them."""
    messages = Message.objects.filter(owner=owner).exclude(role=Message.Role.SYSTEM)
    # Containment (jsonb @>) is never NULL, so messages without these keys are always kept.
    derived = Q(metadata__contains={"injected": True})
    for source in sorted(Message.DERIVED_SOURCES):
        derived |= Q(metadata__contains={"source": source})
    messages = messages.exclude(derived)
    if agent_id is not None:
        messages = messages.filter(agent_id=agent_id)
    if exclude_session_id:
        try:
            messages = messages.exclude(session_id=uuid.UUID(str(exclude_session_id)))
        except ValueError as exc:
            raise InvalidInputError("exclude_session_id is not a session id.") from exc
    return messages


def _fused(dense: list[tuple[int, float]], keyword: list[tuple[int, float]], strategy: str) -> dict[int, float]:
    """One score per candidate from the two ranked lists."""
    if strategy == "rrf":
        scores: dict[int, float] = {}
        for ranked in (dense, keyword):
            for rank, (pk, _) in enumerate(ranked, start=1):
                scores[pk] = scores.get(pk, 0.0) + 1 / (RRF_K + rank)
        return scores
    weight = (
        settings.RECALL_KEYWORD_WEIGHT if strategy == "blend" else (1.0 if strategy in ("bm25", "keyword") else 0.0)
    )
    top = max((score for _, score in keyword), default=0.0) or 1.0
    similarity = dict(dense)
    lexical = {pk: score / top for pk, score in keyword}
    return {
        pk: (1 - weight) * similarity.get(pk, 0.0) + weight * lexical.get(pk, 0.0)
        for pk in dict.fromkeys([*similarity, *lexical])
    }


def _with_neighbours(fused: dict[int, float], rows: dict[int, Message], *, weight: float) -> dict[int, float]:
    """Each candidate gains a share of its best-scoring neighbour's score (the turn just before or just
    after it, when that turn is a candidate too): the answer to a question usually sits next to other
    turns about the same thing, so a turn whose neighbours also match is more likely the one asked for."""
    at = {(rows[pk].session_id, rows[pk].seq): pk for pk in fused if pk in rows}

    def neighbour(pk: int) -> float:
        session_id, seq = rows[pk].session_id, rows[pk].seq
        return max(fused.get(at.get((session_id, seq + step), -1), 0.0) for step in (-1, 1))

    return {pk: score + weight * neighbour(pk) for pk, score in fused.items() if pk in rows}


def recall_messages(
    *,
    owner,
    query: str,
    agent_id: str | None = None,
    exclude_session_id: str | None = None,
    max_results: int = 10,
    max_tokens: int = 2000,
    threshold: float | None = None,
    query_vector: Sequence[float] | None = None,
    query_model: str = "",
    strategy: str = "",
    stages: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """Messages from the owner's earlier sessions relevant to ``query``, best first.

    Dense candidates (cosine similarity over pgvector, when ``query_vector`` is given) and keyword
    candidates (BM25 over PostgreSQL's full-text columns) are fused into one ranking (``strategy``,
    RECALL_STRATEGY by default). What is returned passes the similarity ``threshold``; messages not
    embedded yet are judged by their words alone. When nothing passes, the keyword matches are
    returned (``source: "keyword"``). ``source`` says what answered: vector, keyword or hybrid.
    Trimmed to ``max_tokens``: whole messages while they fit, then the next one cut with an ellipsis
    if more than 100 characters of budget remain. ``stages``, when given, is told how long each
    retriever and the fusion took, for the caller's trace.
    """
    strategy = strategy or settings.RECALL_STRATEGY
    if strategy not in RECALL_STRATEGIES:
        raise InvalidInputError(f"strategy must be one of {', '.join(RECALL_STRATEGIES)}.")
    messages = recall_scope(owner=owner, agent_id=agent_id, exclude_session_id=exclude_session_id)
    threshold = recall_threshold() if threshold is None else threshold
    pool = max(50, 3 * max_results)

    timed = _Stopwatch(stages)
    span = when.span_of(query, now=_latest(messages) if when.needs_now(query) else None)
    dense: list[tuple[int, float]] = []
    if query_vector is not None and strategy != "keyword" and strategy != "bm25":
        nearest = nearest_neighbours(
            queryset=messages.only("pk"), embedding=query_vector, model_name=query_model, limit=pool
        )
        dense = [(m.pk, 1 - m.distance) for m in nearest]
        if span is not None:
            # A question about a time also gets the nearest of what was said then, however far down
            # the whole history's ranking it would come.
            then = messages.filter(created_at__gte=span.start, created_at__lt=span.end)
            seen = {pk for pk, _ in dense}
            nearest = nearest_neighbours(
                queryset=then.only("pk"), embedding=query_vector, model_name=query_model, limit=pool // 2
            )
            dense = sorted(
                [*dense, *((m.pk, 1 - m.distance) for m in nearest if m.pk not in seen)], key=lambda c: -c[1]
            )
    sessions: list = []
    if query_vector is not None and settings.RECALL_SESSIONS and strategy not in ("keyword", "bm25"):
        # Two stages: the sessions whose archive overviews (L1) answer best, then their turns.
        sessions = _best_sessions(
            owner=owner,
            agent_id=agent_id,
            exclude_session_id=exclude_session_id,
            vector=query_vector,
            model=query_model,
            limit=settings.RECALL_SESSIONS,
        )
        if sessions:
            seen = {pk for pk, _ in dense}
            inside = nearest_neighbours(
                queryset=messages.filter(session_id__in=sessions).only("pk"),
                embedding=query_vector,
                model_name=query_model,
                limit=pool // 2,
            )
            dense += [(m.pk, 1 - m.distance) for m in inside if m.pk not in seen]
            dense.sort(key=lambda candidate: -candidate[1])
    timed.lap("dense", candidates=len(dense))
    keyword: list[tuple[int, float]] = []
    if strategy == "keyword":
        keyword = _ts_ranked(messages, query, limit=pool)
    elif strategy != "dense":
        keyword = bm25_rank(messages, query_lexemes(query), limit=pool, term_counts=False)

    timed.lap("keyword", candidates=len(keyword))
    fused = _fused(dense, keyword, strategy)
    rows = (
        messages.filter(pk__in=list(fused))
        .select_related("session")
        .only("id", "session_id", "seq", "role", "content", "created_at", "metadata", "session__title")
    )
    if query_vector is not None:
        # Keyword candidates the dense side did not rank get their similarity, exactly, for the threshold.
        rows = rows.annotate(distance=cosine_distance(query_vector, query_model))
    rows = {m.pk: m for m in rows}
    similarity = {pk: 1 - m.distance for pk, m in rows.items() if getattr(m, "distance", None) is not None}

    if sessions:
        boost = 1 + settings.RECALL_SESSION_BOOST
        fused = {
            pk: score * boost if rows[pk].session_id in sessions else score for pk, score in fused.items() if pk in rows
        }
    if span is not None:
        boost = 1 + settings.RECALL_TIME_BOOST
        fused = {
            pk: score * boost if span.start <= rows[pk].created_at < span.end else score
            for pk, score in fused.items()
            if pk in rows
        }
    if settings.RECALL_NEIGHBOUR_WEIGHT:
        fused = _with_neighbours(fused, rows, weight=settings.RECALL_NEIGHBOUR_WEIGHT)

    def passes(pk: int) -> bool:
        known = similarity.get(pk)
        return known >= threshold if known is not None else pk in dict(keyword)

    ranked = sorted((pk for pk in fused if pk in rows), key=lambda pk: (-fused[pk], pk))
    found = [_recall_row(rows[pk], similarity.get(pk), fused[pk]) for pk in ranked if passes(pk)][:max_results]
    dense_ids, keyword_ids = {pk for pk, _ in dense}, {pk for pk, _ in keyword}
    answered = {row["id"] for row in found}
    if not found and keyword:
        found = [_recall_row(rows[pk], similarity.get(pk), score) for pk, score in keyword if pk in rows]
        found = found[:max_results]
        source = "keyword"
    elif answered & dense_ids and answered & keyword_ids:
        source = "hybrid"
    elif answered & dense_ids:
        source = "vector"
    else:
        source = "keyword"
    trimmed = trim_to_token_budget(found, max_tokens)
    timed.lap("fusion", method=strategy, threshold=threshold, kept=len(trimmed))
    return {
        "messages": trimmed,
        "source": source,
        "token_estimate": sum(estimate_tokens(m["content"]) for m in trimmed),
        "count": len(trimmed),
    }


class _Stopwatch:
    """Appends to ``stages`` (when there is a list to tell) the time since the previous lap."""

    def __init__(self, stages: list[dict[str, Any]] | None) -> None:
        self.stages, self.last = stages, time.perf_counter()

    def lap(self, name: str, **details: Any) -> None:
        now = time.perf_counter()
        if self.stages is not None:
            self.stages.append({"stage": name, "ms": round((now - self.last) * 1000, 2), **details})
        self.last = now


def _best_sessions(*, owner, agent_id, exclude_session_id, vector, model: str, limit: int) -> list:
    """The sessions whose archive overviews are nearest to the question, best first."""
    archives = Archive.objects.filter(owner=owner)
    if agent_id is not None:
        archives = archives.filter(agent_id=agent_id)
    if exclude_session_id:
        archives = archives.exclude(session_id=exclude_session_id)
    nearest = nearest_neighbours(queryset=archives.only("session_id"), embedding=vector, model_name=model, limit=limit)
    return list(dict.fromkeys(archive.session_id for archive in nearest))


def _latest(messages: QuerySet[Message]) -> datetime:
    """The time a question about "last May" is asked from: the latest thing remembered."""
    return messages.aggregate(latest=Max("created_at"))["latest"] or timezone.now()


def _ts_ranked(messages: QuerySet[Message], query: str, *, limit: int) -> list[tuple[int, float]]:
    """PostgreSQL's own ranking of messages holding any of the query's words."""
    words = _or_query(query)
    if not words:
        return []
    tsquery = SearchQuery(words, search_type="websearch", config=TEXT_SEARCH_CONFIG)
    matches = (
        messages.filter(search_vector=tsquery)
        .annotate(rank=SearchRank(F("search_vector"), tsquery))
        .order_by("-rank", "-created_at")
    )
    return [(pk, float(rank)) for pk, rank in matches.values_list("pk", "rank")[:limit]]


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
    in the same query. ``source_session_id`` is that first turn's session, for a memory noted in a
    conversation not archived yet."""
    sources = Memory.source_messages.through.objects.filter(memory_id=OuterRef("pk")).order_by("message_id")
    current = sources.filter(message__archive_id=OuterRef("source_archive_id"))
    return memories.annotate(
        source_message_id=Coalesce(
            Subquery(current.values("message_id")[:1]), Subquery(sources.values("message_id")[:1])
        ),
        source_session_id=Subquery(sources.values("message__session_id")[:1]),
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
