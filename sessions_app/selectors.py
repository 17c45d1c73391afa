"""Reads of sessions and memory, always scoped to one owner."""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.contrib.postgres.search import SearchQuery
from django.db import connection
from django.db.models import (
    BooleanField,
    Count,
    Exists,
    ExpressionWrapper,
    Func,
    IntegerField,
    OuterRef,
    Q,
    QuerySet,
    Subquery,
    TextField,
)
from django.db.models.functions import Cast, Coalesce

from foundation.ai.memories import kin_of
from foundation.ai.tokens import CHARS_PER_TOKEN, estimate_tokens
from foundation.parsers import json_loads_within_depth
from foundation.text import TEXT_SEARCH_CONFIG
from foundation.vectors import vector_text
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


# --- Metadata as it can be shown ---------------------------------------------------------------------


def with_metadata_text(rows: QuerySet) -> QuerySet:
    """Rows whose metadata is read as its JSON text, to be parsed by ``metadata_loaded``: a value kept
    before its depth was limited would fail the ORM's own parsing, and every page or answer holding it."""
    return rows.defer("metadata").annotate(metadata_text=Cast("metadata", TextField()))


def metadata_loaded(rows: Sequence[Any]) -> list[Any]:
    """``rows`` (from ``with_metadata_text``) with their metadata set, nested too deep parts cut, and
    ``metadata_cut`` saying where that happened."""
    for row in rows:
        text = row.metadata_text
        row.metadata, row.metadata_cut = json_loads_within_depth(text) if text is not None else ({}, False)
    return list(rows)


# --- Pages of a session's messages and archives -----------------------------------------------------------

# A page holds at most this many bytes of text and metadata (and always one row, however large), so that
# no page of a long conversation, nor of one with very long turns, can fill a server's memory.
PAGE_MAX_BYTES = 2 * 1024 * 1024


@dataclass
class Page:
    """Rows of a session in their order (oldest first), and where the pages around them start: the key
    (``seq`` or ``index``) before which the earlier page ends, and after which the later one begins."""

    rows: list[Any]
    earlier_before: int | None
    later_after: int | None


def _page_keys(
    rows: QuerySet, *, key: str, size: Any, limit: int, before: int | None, after: int | None, max_bytes: int
) -> tuple[list[int], bool]:
    """The keys of one page, oldest first, and whether more rows lie beyond it in the direction read:
    from ``after`` onwards, else back from ``before`` (or from the newest). Only keys and sizes are read
    here, for at most ``limit + 1`` rows, so a page costs the same at the thousandth page as at the first."""
    if after is not None:
        rows = rows.filter(**{f"{key}__gt": after}).order_by(key)
    else:
        rows = rows.filter(**{f"{key}__lt": before}) if before is not None else rows
        rows = rows.order_by(f"-{key}")
    sized = list(rows.annotate(page_bytes=size).values_list(key, "page_bytes")[: limit + 1])
    keys: list[int] = []
    used = 0
    for value, nbytes in sized[:limit]:
        if keys and used + (nbytes or 0) > max_bytes:
            break
        keys.append(value)
        used += nbytes or 0
    return sorted(keys), len(keys) < len(sized)


def _page(
    rows: QuerySet, *, key: str, size: Any, limit: int, before: int | None, after: int | None, max_bytes: int
) -> tuple[list[int], int | None, int | None]:
    """The keys of one page, and the bounds of the pages around it (None where there is none)."""
    keys, more = _page_keys(rows, key=key, size=size, limit=limit, before=before, after=after, max_bytes=max_bytes)
    if not keys:
        # Nothing there: the page before an empty tail ends where the tail starts, and the other way round.
        edge_before = after + 1 if after is not None else before
        edge_after = before - 1 if before is not None else after
        earlier = (
            edge_before if edge_before is not None and rows.filter(**{f"{key}__lt": edge_before}).exists() else None
        )
        later = edge_after if edge_after is not None and rows.filter(**{f"{key}__gt": edge_after}).exists() else None
        return keys, earlier, later
    first, last = keys[0], keys[-1]
    reading_back = after is None
    has_earlier = more if reading_back else rows.filter(**{f"{key}__lt": first}).exists()
    has_later = more if not reading_back else (before is not None and rows.filter(**{f"{key}__gt": last}).exists())
    return keys, (first if has_earlier else None), (last if has_later else None)


class OctetLength(Func):
    """How many bytes a text takes (PostgreSQL's octet_length)."""

    function = "OCTET_LENGTH"
    output_field = IntegerField()


def _text_bytes(*fields: str):
    """The bytes a row's text and JSON fields take, as PostgreSQL stores them (read from their headers)."""
    total = None
    for name in fields:
        part = Coalesce(OctetLength(Cast(name, TextField())), 0)
        total = part if total is None else total + part
    return total


def session_message_page(
    *,
    session: ChatSession,
    limit: int,
    before: int | None = None,
    after: int | None = None,
    max_bytes: int = PAGE_MAX_BYTES,
) -> Page:
    """One page of a session's messages, oldest first: the newest ``limit``, or those before the
    message ``before`` (reading back), or after the message ``after`` (reading on); fewer when their
    text and metadata would pass ``max_bytes``."""
    keys, earlier, later = _page(
        Message.objects.filter(session=session),
        key="seq",
        size=_text_bytes("content", "metadata"),
        limit=limit,
        before=before,
        after=after,
        max_bytes=max_bytes,
    )
    rows = metadata_loaded(with_metadata_text(session_messages(session=session).filter(seq__in=keys))) if keys else []
    return Page(rows=rows, earlier_before=earlier, later_after=later)


def session_archive_page(
    *,
    session: ChatSession,
    limit: int,
    before: int | None = None,
    after: int | None = None,
    max_bytes: int = PAGE_MAX_BYTES,
) -> Page:
    """One page of a session's archives, oldest first, as ``session_message_page`` pages messages."""
    keys, earlier, later = _page(
        Archive.objects.filter(session=session),
        key="index",
        size=_text_bytes("abstract", "overview", "overview_data"),
        limit=limit,
        before=before,
        after=after,
        max_bytes=max_bytes,
    )
    rows = list(session_archives(session=session).filter(index__in=keys)) if keys else []
    return Page(rows=rows, earlier_before=earlier, later_after=later)


def session_message_count(*, session: ChatSession) -> int:
    return Message.objects.filter(session=session).count()


def session_archive_count(*, session: ChatSession) -> int:
    return Archive.objects.filter(session=session).count()


# --- Session context for search -------------------------------------------------------------------------


def _or_query(text: str) -> str:
    """Any of the query's words (websearch syntax; PostgreSQL drops stopwords and stems the rest)."""
    words = re.findall(r"[^\W_]{2,}", text)[:32]
    return " or ".join(words)


def session_ranked_overviews(
    *, session: ChatSession, query: str, limit: int, query_vector: Sequence[float] | None, query_model: str
) -> list[str]:
    """The session's archive overviews most relevant to ``query``, best first, in one query: by vector
    similarity for archives embedded by the model that embedded the query, then by full-text rank, then
    newest first (what a search is handed of the session's past, beside its latest turns)."""
    if limit <= 0:
        return []
    # Written out rather than built through the ORM: every turn asks it, and building it (a query vector
    # among its parameters) cost ten times what PostgreSQL takes to answer it.
    order, params = [], []
    if query.strip():
        if query_vector is not None:
            order.append(
                "CASE WHEN embedding IS NOT NULL AND embedding_model = %s THEN embedding <=> %s::vector END"
                " ASC NULLS LAST"
            )
            params += [query_model, vector_text(query_vector)]
        order.append(
            "ts_rank(to_tsvector(%s::regconfig, COALESCE(overview, '') || ' ' || COALESCE(abstract, '')),"
            " websearch_to_tsquery(%s::regconfig, %s)) DESC"
        )
        params += [TEXT_SEARCH_CONFIG, TEXT_SEARCH_CONFIG, _or_query(query)]
    order.append('"index" DESC')
    sql = (
        f"SELECT overview FROM {Archive._meta.db_table} WHERE session_id = %s AND overview <> ''"  # noqa: S608
        f" ORDER BY {', '.join(order)} LIMIT %s"
    )
    with connection.cursor() as cursor:
        cursor.execute(sql, (session.pk, *params, limit))
        return [overview for (overview,) in cursor.fetchall()]


# Newest first, while the turns before each one hold less than PAGE_MAX_BYTES (so the newest is always
# there): a thousand turns of 100,000 characters are not one answer of 100 MB. Written out rather than
# built through the ORM: every turn asks it, and building it cost more than running it.
_MESSAGE_BYTES = "(COALESCE(OCTET_LENGTH(content), 0) + COALESCE(OCTET_LENGTH(metadata::text), 0))"
_RECENT_SQL = (
    f"SELECT id, seq, role, content, created_at, metadata FROM (SELECT id, seq, role, content, created_at,"  # noqa: S608
    f" metadata, {_MESSAGE_BYTES} AS own_bytes, SUM({_MESSAGE_BYTES}) OVER (ORDER BY seq DESC) AS running_bytes"
    f" FROM {Message._meta.db_table} WHERE session_id = %s AND archive_id IS NULL) AS recent"
    " WHERE running_bytes < own_bytes + %s ORDER BY seq DESC LIMIT %s"
)


def session_recent_for_search(*, session: ChatSession, max_messages: int) -> list[dict[str, Any]]:
    """The session's latest live (uncommitted) turns, oldest first, as a search is handed them."""
    if max_messages <= 0:
        return []
    metadata = Message._meta.get_field("metadata")
    with connection.cursor() as cursor:
        cursor.execute(_RECENT_SQL, (session.pk, PAGE_MAX_BYTES, max_messages))
        rows = cursor.fetchall()
    recent = [
        {
            "id": id_,
            "seq": seq,
            "role": role,
            "content": content,
            "created_at": created_at,
            "metadata": metadata.from_db_value(raw, None, connection),
        }
        for id_, seq, role, content, created_at, raw in rows
    ]
    return list(reversed(recent))


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


def memory_family_names(*, owner_id: int, agent_id: str) -> dict[str, str]:
    """The names of the owner's family and pets their memories hold, each with its relation ("Mei":
    "sister"), in one query."""
    family = Memory.objects.filter(
        owner_id=owner_id, agent_id=agent_id, category="entities", superseded_by__isnull=True
    ).order_by("-updated_at")
    return kin_of(list(family.values_list("category", "content")))


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
