"""Cross-session recall: the owner's earlier turns relevant to a question, ranked in one place.

Two retrievers find candidates among the owner's messages (scoped to an agent, without the current
session and without text the product wrote itself): pgvector's nearest neighbours, with the nearest of
what was said in a time the question names, and BM25 over PostgreSQL's full-text column. Every
candidate is then described by the same signals, read in one query with its neighbouring turns: its
cosine similarity, its BM25 score and the share of the question's (rarity-weighted) words it holds,
its rank in each list, how well the turns just before and after it match, whether it was said in the
time the question names, and whether its speaker is the person the question names. ``fusion`` turns
those signals into one score: by default a logistic model fitted on two labelled sets of long
conversations (``bench/recall_fit.py``); reciprocal rank, a calibrated blend, or one retriever alone
can be asked for. Messages written a moment ago that no worker has embedded yet are embedded first
(a few, the newest), so a turn is found by meaning as well as by its words as soon as it is written.
"""

from __future__ import annotations

import dataclasses
import logging
import re
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from django.conf import settings
from django.contrib.postgres.search import SearchQuery, SearchRank
from django.db import connection
from django.db.models import F, Max, QuerySet
from django.db.models.functions import Length
from django.utils import timezone

from foundation import ai, when
from foundation.ai.embeddings import LOCAL_INT8_MODEL_NAME, LOCAL_MODEL_NAME
from foundation.ai.tokens import CHARS_PER_TOKEN, estimate_tokens
from foundation.bm25 import TermStatistics, bm25_rank, quoted, term_statistics
from foundation.db import where_sql
from foundation.embedding import embed_ids, embedding_claims
from foundation.exceptions import InvalidInputError
from foundation.parsers import json_loads_within_depth
from foundation.text import LEXEMES_SQL, TEXT_SEARCH_CONFIG, lexemes_params, query_lexemes
from foundation.tracing import RESULT_TEXT_CHARS, ms_since, timings_of
from foundation.vectors import nearest_neighbours, vector_text
from retrieval_app import fusion
from retrieval_app.models import SearchTrace
from sessions_app.models import Message
from sessions_app.uris import message_uri

logger = logging.getLogger(__name__)

# How recall ranks: the learned fusion of every signal, reciprocal rank (rrf) or the calibrated blend
# of the two retrievers, or one of them alone: dense (cosine), bm25, keyword (PostgreSQL's ts_rank).
RECALL_STRATEGIES = ("learned", "rrf", "blend", "dense", "bm25", "keyword")

# Cosine similarity floors by embedding model. 0.65 suits text-embedding-3-small. The local
# MiniLM spreads related texts lower: on bench/recall_threshold.py's labelled set, 0.35 has the best F1
# and is the lowest floor with precision >= 0.9 (0.65 there would answer 16% of questions).
THRESHOLDS = {
    LOCAL_MODEL_NAME: 0.35,
    LOCAL_INT8_MODEL_NAME: 0.35,
    "text-embedding-3-small": 0.65,
    "openai/text-embedding-3-small": 0.65,
    "text-embedding-3-large": 0.6,
    "text-embedding-ada-002": 0.8,
}
DEFAULT_THRESHOLD = 0.5

# Candidates each retriever contributes, at least.
MIN_POOL = 50
# Messages written but not embedded yet that a recall embeds itself, newest first; a bulk import's
# backlog beyond that is left to the workers (meanwhile its turns are found by their words). Each costs
# the turn a few milliseconds of the model, so each is one of at most PENDING_EMBED_MAX_CHARS: a long
# answer just written is left to the workers, which embed every turn within a second or two.
PENDING_EMBED_MAX = 4
PENDING_EMBED_MAX_CHARS = 500
# A turn this short ("Yes, last Tuesday!") is mostly what it answers.
SHORT_TURN_WORDS = 6


# The learned fusion: a logistic regression of "is this turn evidence for the question" on the signals
# below, fitted by bench/recall_fit.py on every conversation of bench/recallset and bench/dialogset
# (candidates' neighbouring turns included). Held out by conversation it ranks as well as when fitted
# on the other set alone, which is how it is known to carry over to conversations written otherwise.
LEARNED = fusion.LinearFusion(
    weights={
        "bm25": 3.266,
        "bm25_rank": -0.864,
        "coverage": 0.041,
        "dense": 1.174,
        "dense_rank": 2.145,
        "in_span": 1.197,
        "neighbour_coverage": 1.504,
        "neighbour_dense": 0.888,
        "neighbour_rank": 2.105,
        "says_when": 0.746,
        "short": -1.295,
        "speaker": 1.777,
        "when_asked": -0.273,
    },
    bias=-8.970,
)


def recall_threshold() -> float:
    if settings.RECALL_SIMILARITY_THRESHOLD:
        return float(settings.RECALL_SIMILARITY_THRESHOLD)
    return THRESHOLDS.get(ai.active_embedding_model(), DEFAULT_THRESHOLD)


def recall_scope(*, owner, agent_id: str | None = None, exclude_session_id: str | None = None) -> QuerySet[Message]:
    """The messages recall searches: the owner's (and agent's), but the excluded session's and text
    the product itself wrote into conversations (``Message.is_derived``): recalling that would echo
    the product's own earlier answers back as if someone had said them."""
    messages = Message.objects.filter(owner=owner).said()
    if agent_id is not None:
        messages = messages.filter(agent_id=agent_id)
    if exclude_session_id:
        try:
            messages = messages.exclude(session_id=uuid.UUID(str(exclude_session_id)))
        except ValueError as exc:
            raise InvalidInputError("exclude_session_id is not a session id.") from exc
    return messages


@dataclass(frozen=True)
class RecallQuery:
    """A question as recall needs it: its words, vector, stems, the time it names and the people."""

    text: str
    vector: list[float] | None
    model: str
    lexemes: tuple[str, ...]
    span: when.Span | None = None
    asks_when: bool = False


@dataclass(slots=True)
class Candidate:
    """One earlier turn and what recall knows of it."""

    pk: int
    session_id: uuid.UUID
    seq: int
    role: str
    speaker: str
    created_at: datetime
    words: int
    says_when: bool = False
    dense: float | None = None
    matched: tuple[str, ...] = ()
    bm25: float = 0.0
    coverage: float = 0.0
    dense_rank: int | None = None
    bm25_rank: int | None = None
    # Its similarity and dense rank on the 0-1 scales the signals use, which its neighbours read too.
    dense_signal: float = 0.0
    rank_signal: float = 0.0
    signals: dict[str, float] = field(default_factory=dict)
    score: float = 0.0
    # What a result shows of it: content, metadata, its session's title.
    row: dict[str, Any] = field(default_factory=dict, repr=False)


@dataclass
class Candidates:
    """The candidates of one question, with each retriever's ranking, for fusion and for the trace."""

    by_pk: dict[int, Candidate]
    dense: list[tuple[int, float]]
    keyword: list[tuple[int, float]]
    neighbours: dict[int, Candidate]


class _Stopwatch:
    """Appends to ``stages`` (when there is a list to tell) the time since the previous lap."""

    def __init__(self, stages: list[dict[str, Any]] | None) -> None:
        self.stages, self.last = stages, time.perf_counter()

    def lap(self, name: str, **details: Any) -> None:
        now = time.perf_counter()
        if self.stages is not None:
            self.stages.append({"stage": name, "ms": round((now - self.last) * 1000, 2), **details})
        self.last = now


def _latest(messages: QuerySet[Message]) -> datetime:
    """The time a question about "last May" is asked from: the latest thing remembered."""
    return messages.aggregate(latest=Max("created_at"))["latest"] or timezone.now()


def recall_query(
    *,
    text: str,
    vector: list[float] | None,
    model: str,
    scope: QuerySet[Message],
    lexemes: Sequence[str] | None = None,
) -> RecallQuery:
    """The question as recall needs it; ``lexemes`` are its stems, when the caller has them already."""
    span = when.span_of(text, now=_latest(scope) if when.needs_now(text) else None)
    return RecallQuery(
        text=text,
        vector=vector,
        model=model,
        lexemes=tuple(query_lexemes(text) if lexemes is None else lexemes),
        span=span,
        asks_when=when.asks_when(text),
    )


def _dense(
    scope: QuerySet[Message], query: RecallQuery, *, pool: int, sized_by: QuerySet[Message] | None = None
) -> list[tuple[int, float]]:
    if query.vector is None:
        return []
    nearest = nearest_neighbours(
        queryset=scope, embedding=query.vector, model_name=query.model, limit=pool, sized_by=sized_by
    )
    found = {pk: 1 - distance for pk, distance in nearest}
    if query.span is not None:
        # A question about a time also gets the nearest of what was said then, however far down the
        # whole history's ranking it would come.
        then = scope.filter(created_at__gte=query.span.start, created_at__lt=query.span.end)
        nearest = nearest_neighbours(queryset=then, embedding=query.vector, model_name=query.model, limit=pool // 2)
        for pk, distance in nearest:
            found.setdefault(pk, 1 - distance)
    return sorted(found.items(), key=lambda item: (-item[1], item[0]))


def _ts_ranked(messages: QuerySet[Message], query: RecallQuery, *, limit: int) -> list[tuple[int, float]]:
    """PostgreSQL's own ranking of messages holding any of the query's words."""
    words = " or ".join(re.findall(r"[^\W_]{2,}", query.text)[:32])
    if not words:
        return []
    tsquery = SearchQuery(words, search_type="websearch", config=TEXT_SEARCH_CONFIG)
    matches = (
        messages.filter(search_vector=tsquery)
        .annotate(rank=SearchRank(F("search_vector"), tsquery))
        .order_by("-rank", "-created_at")
    )
    return [(pk, float(rank)) for pk, rank in matches.values_list("pk", "rank")[:limit]]


# The messages' table, as the statements written by hand name it.
_MESSAGES = connection.ops.quote_name(Message._meta.db_table)


# ``pks`` and the turns just before and after each of them in their sessions, as one list of ids (one
# subquery, so PostgreSQL looks each up by its key rather than scanning the scope).
_WITH_NEIGHBOURS_SQL = (
    "SELECT unnest(%s::bigint[]) UNION"  # noqa: S608 (the table name comes from the model)
    f" SELECT n.id FROM {_MESSAGES} c JOIN {_MESSAGES} n ON n.session_id = c.session_id"
    " AND n.seq IN (c.seq - 1, c.seq + 1) WHERE c.id = ANY(%s)"
)


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


_SESSIONS = connection.ops.quote_name(Message._meta.get_field("session").related_model._meta.db_table)


def _described_sql(where: str, lexemes: Sequence[str], with_vector: bool) -> str:
    """The statement of ``_described``, its columns in the order that reads them: written out, since building
    it through the ORM took several times as long as PostgreSQL took to answer it."""
    matched = ", ".join(f"CASE WHEN {_MESSAGES}.search_vector @@ %s::tsquery THEN %s END" for _ in lexemes)
    distance = (
        f"CASE WHEN {_MESSAGES}.embedding IS NOT NULL AND {_MESSAGES}.embedding_model = %s"
        f" THEN {_MESSAGES}.embedding <=> %s::vector END"
        if with_vector
        else "NULL::float8"
    )
    return (
        f"SELECT {_MESSAGES}.id, {_MESSAGES}.session_id, {_MESSAGES}.seq, {_MESSAGES}.role,"  # noqa: S608
        f" {_MESSAGES}.metadata ->> 'speaker', {_MESSAGES}.metadata::text,"
        # Microseconds since 1970 read as a number: parsing a few hundred timestamps from text took
        # longer than PostgreSQL took to find the rows.
        f" (extract(epoch FROM {_MESSAGES}.created_at) * 1000000)::bigint,"
        f" array_remove(ARRAY[{matched}]::text[], NULL), length({_MESSAGES}.search_vector),"
        f" {_MESSAGES}.content, s.title, {distance}"
        f" FROM {_MESSAGES} JOIN {_SESSIONS} s ON s.id = {_MESSAGES}.session_id"
        f" WHERE ({where}) AND {_MESSAGES}.id IN ({_WITH_NEIGHBOURS_SQL})"
    )


def _described(scope: QuerySet[Message], query: RecallQuery, pks: Sequence[int]) -> dict[int, Candidate]:
    """The candidates and their neighbouring turns, with similarity and matched stems, in one query.
    Their metadata comes back as text, read only for the few that are returned (``_recall_row``)."""
    where, where_params = where_sql(scope)
    with_vector = query.vector is not None
    params = [value for lexeme in query.lexemes for value in (quoted(lexeme), lexeme)]
    params += [query.model, vector_text(query.vector)] if with_vector else []
    params += [*where_params, list(pks), list(pks)]
    with connection.cursor() as cursor:
        cursor.execute(_described_sql(where, query.lexemes, with_vector), params)
        rows = cursor.fetchall()
    # A few hundred rows a question: read by position, and what only a returned turn shows kept aside as is.
    found = {}
    for pk, session_id, seq, role, speaker, metadata_text, created_us, matched, stems, content, title, distance in rows:
        found[pk] = Candidate(
            pk=pk,
            session_id=session_id,
            seq=seq,
            role=role,
            speaker=speaker or role,
            created_at=_EPOCH + timedelta(microseconds=created_us),
            words=stems or 0,
            says_when=when.says_when(content),
            dense=None if distance is None else 1 - distance,
            matched=tuple(matched) if matched else (),
            row={"content": content, "metadata_text": metadata_text, "session__title": title},
        )
    return found


def recall_candidates(
    *,
    scope: QuerySet[Message],
    query: RecallQuery,
    pool: int,
    strategy: str,
    timed: _Stopwatch | None = None,
    with_neighbours: bool = False,
    statistics_scope: QuerySet[Message] | None = None,
    vector_later: ai.QueryEmbedding | None = None,
) -> Candidates:
    """Candidates from the retrievers ``strategy`` uses, each described by every signal. The words'
    statistics (how many messages, how many hold each word) are counted over ``statistics_scope`` when
    given: the person's messages without the session left out, the same for every session and so
    remembered, where counting again for each new session would read every message each time. With
    ``vector_later`` (the question's embedding still being computed, see ``ai.embed_query_later``), the
    keyword retriever runs first, while the model works, and the vector is waited for only then."""
    timed = timed or _Stopwatch(None)
    uses_dense = strategy not in ("bm25", "keyword")
    dense: list[tuple[int, float]] = []
    if uses_dense and vector_later is None:
        dense = _dense(scope, query, pool=pool, sized_by=statistics_scope)
        timed.lap("dense", candidates=len(dense))
    keyword, statistics = _keyword(scope, query, pool=pool, strategy=strategy, statistics_scope=statistics_scope)
    timed.lap("keyword", candidates=len(keyword))
    if vector_later is not None:
        vector, model, _ms = vector_later.result()
        query = dataclasses.replace(query, vector=vector, model=model or query.model)
        timed.lap("query_wait")
        dense = _dense(scope, query, pool=pool, sized_by=statistics_scope) if uses_dense else []
        timed.lap("dense", candidates=len(dense))
    pks = list(dict.fromkeys([pk for pk, _ in dense] + [pk for pk, _ in keyword]))
    described = _described(scope, query, pks) if pks else {}
    by_pk = {pk: described[pk] for pk in pks if pk in described}
    neighbours = {pk: c for pk, c in described.items() if pk not in by_pk}
    _describe_signals(by_pk, described, dense, keyword, query, statistics)
    if with_neighbours:
        by_pk |= neighbours
    timed.lap("describe", described=len(described))
    return Candidates(by_pk=by_pk, dense=dense, keyword=keyword, neighbours=neighbours)


def _keyword(
    scope: QuerySet[Message],
    query: RecallQuery,
    *,
    pool: int,
    strategy: str,
    statistics_scope: QuerySet[Message] | None,
) -> tuple[list[tuple[int, float]], TermStatistics]:
    """The keyword retriever's ranking for ``strategy``, and the words' statistics it used."""
    counted = statistics_scope if statistics_scope is not None else scope
    statistics = term_statistics(counted, query.lexemes) if query.lexemes else TermStatistics(0, 1.0, {})
    if strategy == "keyword":
        return _ts_ranked(scope, query, limit=pool), statistics
    if strategy == "dense":
        return [], statistics
    return bm25_rank(scope, query.lexemes, limit=pool, term_counts=False, statistics=statistics), statistics


def _named_speakers(query: RecallQuery, speakers: set[str]) -> set[str]:
    words = {word.lower() for word in re.findall(r"[^\W\d_]+", query.text)}
    return {speaker for speaker in speakers if speaker.split()[0].lower() in words}


def _describe_signals(
    by_pk: dict[int, Candidate],
    described: dict[int, Candidate],
    dense: list[tuple[int, float]],
    keyword: list[tuple[int, float]],
    query: RecallQuery,
    statistics: TermStatistics,
) -> None:
    """Each candidate's signals, on comparable scales (0 to 1), for fusion."""
    weights = statistics.weights
    total_weight = sum(weights.get(lexeme, 0.0) for lexeme in query.lexemes) or 1.0
    for candidate in described.values():
        matched = candidate.matched
        weight = sum(weights.get(lexeme, 0.0) for lexeme in matched) if matched else 0.0
        # BM25 counts a stem once; stems given twice (by a caller's query) count twice in the coverage.
        once = weight if len(set(matched)) == len(matched) else sum(weights.get(m, 0.0) for m in set(matched))
        candidate.bm25 = statistics.score_of_weight(once, candidate.words)
        candidate.coverage = weight / total_weight
    for rank, (pk, _) in enumerate(dense, start=1):
        if pk in by_pk:
            by_pk[pk].dense_rank = rank
    for rank, (pk, _) in enumerate(keyword, start=1):
        if pk in by_pk:
            by_pk[pk].bm25_rank = rank
    best_bm25 = max((c.bm25 for c in described.values()), default=0.0) or 1.0
    at = {(c.session_id, c.seq): c for c in described.values()}
    named = _named_speakers(query, {c.speaker for c in described.values()})
    span, asks_when = query.span, query.asks_when
    for candidate in described.values():
        candidate.dense_signal = max(candidate.dense or 0.0, 0.0)
        candidate.rank_signal = _rank_signal(candidate.dense_rank)
    for candidate in described.values():
        session, seq = candidate.session_id, candidate.seq
        before, after = at.get((session, seq - 1)), at.get((session, seq + 1))
        # A turn said on its own (a note, a session of one message) is its own context: it is not
        # penalised for having no neighbours to agree with it.
        before = before or after or candidate
        after = after or before
        candidate.signals = {
            "dense": candidate.dense_signal,
            "bm25": candidate.bm25 / best_bm25,
            "coverage": candidate.coverage,
            "dense_rank": candidate.rank_signal,
            "bm25_rank": _rank_signal(candidate.bm25_rank),
            "neighbour_dense": max(before.dense_signal, after.dense_signal),
            "neighbour_coverage": max(before.coverage, after.coverage),
            "neighbour_rank": max(before.rank_signal, after.rank_signal),
            "in_span": float(span is not None and span.start <= candidate.created_at < span.end),
            "speaker": float(bool(named) and candidate.speaker in named),
            "says_when": float(candidate.says_when),
            "when_asked": float(candidate.says_when and asks_when),
            "short": float(candidate.words < SHORT_TURN_WORDS),
        }


def _rank_signal(rank: int | None) -> float:
    """A rank on a 0-1 scale, as reciprocal-rank fusion weighs it: 1 for the first, 0 when unranked."""
    return 0.0 if rank is None else (fusion.RRF_K + 1) / (fusion.RRF_K + rank)


def recall_fuse(candidates: Candidates, *, strategy: str) -> None:
    """Sets each candidate's score by ``strategy``."""
    by_pk = candidates.by_pk
    if strategy == "learned":
        chosen = list(by_pk.values())
        for candidate, probability in zip(chosen, LEARNED.probabilities([c.signals for c in chosen]), strict=True):
            candidate.score = probability
    elif strategy == "rrf":
        ranks = fusion.reciprocal_rank([[pk for pk, _ in candidates.dense], [pk for pk, _ in candidates.keyword]])
        for pk, candidate in by_pk.items():
            candidate.score = ranks.get(pk, 0.0)
    elif strategy == "dense":
        for candidate in by_pk.values():
            candidate.score = candidate.signals["dense"]
    elif strategy in ("bm25", "keyword"):
        scores = dict(candidates.keyword)
        for pk, candidate in by_pk.items():
            candidate.score = scores.get(pk, 0.0)
    else:
        weight = settings.RECALL_KEYWORD_WEIGHT
        for candidate in by_pk.values():
            candidate.score = (1 - weight) * candidate.signals["dense"] + weight * candidate.signals["bm25"]
    if strategy != "learned":
        _classic_boosts(candidates)


def _classic_boosts(candidates: Candidates) -> None:
    """The hand-set boosts that the classic strategies apply on top of their fused score: the time a
    question names, and a share of the best neighbouring turn's score."""
    boost = 1 + settings.RECALL_TIME_BOOST
    for candidate in candidates.by_pk.values():
        if candidate.signals["in_span"]:
            candidate.score *= boost
    weight = settings.RECALL_NEIGHBOUR_WEIGHT
    if weight:
        at = {(c.session_id, c.seq): c.score for c in candidates.by_pk.values()}
        for candidate in candidates.by_pk.values():
            best = max(at.get((candidate.session_id, candidate.seq + step), 0.0) for step in (-1, 1))
            candidate.signals["neighbour_score"] = best
        for candidate in candidates.by_pk.values():
            candidate.score += weight * candidate.signals["neighbour_score"]


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


def _recall_row(candidate: Candidate) -> dict[str, Any]:
    row, similarity = candidate.row, candidate.dense
    return {
        "id": candidate.pk,
        "session_id": str(candidate.session_id),
        "session_title": row["session__title"],
        "role": candidate.role,
        "content": row["content"],
        "similarity": None if similarity is None else round(similarity, 3),
        "score": round(candidate.score, 4),
        "created_at": candidate.created_at.isoformat(),
        # Metadata kept before its depth was limited would break a plain parse: deeper parts are cut.
        "metadata": None if row["metadata_text"] is None else json_loads_within_depth(row["metadata_text"])[0],
    }


def _stems_and_pending(
    scope: QuerySet[Message], text: str, stems: Sequence[str] | None, *, pending: bool
) -> tuple[tuple, list[int]]:
    """The question's stems (unless the caller has them) and, when asked for, the newest messages in
    scope that no worker has embedded yet (a few short ones at most), in one round trip at most."""
    if not pending:
        return tuple(stems if stems is not None else query_lexemes(text)), []
    waiting = (
        scope.filter(embedding__isnull=True)
        .annotate(chars=Length("content"))
        .filter(chars__lte=PENDING_EMBED_MAX_CHARS)
        .order_by("-pk")
        .values("pk")[:PENDING_EMBED_MAX]
    )
    pending_sql, pending_params = waiting.query.sql_with_params()
    with connection.cursor() as cursor:
        if stems is None:
            cursor.execute(f"SELECT {LEXEMES_SQL}, ARRAY({pending_sql})", [*lexemes_params(text), *pending_params])
            found, waiting_ids = cursor.fetchone()
        else:
            cursor.execute(f"SELECT ARRAY({pending_sql})", pending_params)
            found, waiting_ids = stems, cursor.fetchone()[0]
    return tuple(found or ()), list(waiting_ids or ())


def recall_pending_embed(*, pending: Sequence[int]) -> int:
    """Embeds messages written a moment ago that no worker has embedded yet, so that what was just said
    is found by meaning too. A failing model leaves them to the workers (they are found by their words
    meanwhile). Messages another turn is embedding already are left to it: a burst of turns would
    otherwise each embed every other's message."""
    pending = embedding_claims(kind="messages", ids=pending)
    if not pending:
        return 0
    try:
        return embed_ids(kind="messages", ids=list(pending))
    except ai.EmbeddingError:
        logger.warning("recall: embedding %d new messages failed; they are found by their words", len(pending))
        return 0


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
    query_stems: Sequence[str] | None = None,
    strategy: str = "",
    stages: list[dict[str, Any]] | None = None,
    embed_pending: bool = True,
    query_embedding: ai.QueryEmbedding | None = None,
) -> dict[str, Any]:
    """Messages from the owner's earlier sessions relevant to ``query``, best first.

    What is returned passes the similarity ``threshold``; a message not embedded yet is judged by its
    words alone. When nothing passes, the keyword matches are returned (``source: "keyword"``).
    ``source`` says what answered: vector, keyword or hybrid. Trimmed to ``max_tokens``: whole messages
    while they fit, then the next one cut with an ellipsis if more than 100 characters of budget
    remain. ``stages``, when given, is told how long each step took, for the caller's trace. With
    ``embed_pending`` (and a query vector), the few short messages just written that no worker has
    embedded yet are embedded first, so that they are found by meaning too; a chat turn leaves them to
    the workers, which embed each within a second or two, rather than spend its own time on them.
    ``query_embedding`` (instead of a vector): the vector still being computed, awaited after BM25.
    """
    strategy = strategy or settings.RECALL_STRATEGY
    if strategy not in RECALL_STRATEGIES:
        raise InvalidInputError(f"strategy must be one of {', '.join(RECALL_STRATEGIES)}.")
    scope = recall_scope(owner=owner, agent_id=agent_id, exclude_session_id=exclude_session_id)
    threshold = recall_threshold() if threshold is None else threshold
    timed = _Stopwatch(stages)
    will_have_vector = query_vector is not None or (query_embedding is not None and not query_embedding.empty)
    stems, pending = _stems_and_pending(scope, query, query_stems, pending=embed_pending and will_have_vector)
    if pending and query_vector is None and query_embedding.result()[0] is None:
        pending = []  # the model is failing: the new messages are found by their words, as the question is
    embedded = recall_pending_embed(pending=pending)
    vector = list(query_vector) if query_vector is not None else None
    asked = recall_query(text=query, vector=vector, model=query_model, scope=scope, lexemes=stems)
    timed.lap("pending", embedded=embedded)
    candidates = recall_candidates(
        scope=scope,
        query=asked,
        pool=max(MIN_POOL, 3 * max_results),
        strategy=strategy,
        timed=timed,
        with_neighbours=strategy == "learned",
        statistics_scope=recall_scope(owner=owner, agent_id=agent_id),
        vector_later=query_embedding if query_vector is None else None,
    )
    recall_fuse(candidates, strategy=strategy)
    chosen, source = _chosen(candidates, threshold=threshold, max_results=max_results)
    found = [_recall_row(c) for c in chosen]
    trimmed = trim_to_token_budget(found, max_tokens)
    timed.lap("fusion", method=strategy, threshold=threshold, kept=len(trimmed))
    return _recalled(trimmed, source=source)


def _recalled(messages: list[dict[str, Any]], *, source: str) -> dict[str, Any]:
    """A recall's answer: the messages, what answered, and what they cost in tokens."""
    return {
        "messages": messages,
        "source": source,
        "token_estimate": sum(estimate_tokens(m["content"]) for m in messages),
        "count": len(messages),
    }


def _chosen(candidates: Candidates, *, threshold: float, max_results: int) -> tuple[list[Candidate], str]:
    """The best candidates that pass the threshold (one not embedded yet passes by its words), and what
    answered; when none passes, the keyword matches, so that a word said before is still found."""
    keyword_pks = {pk for pk, _ in candidates.keyword}

    def passes(candidate: Candidate) -> bool:
        return candidate.dense >= threshold if candidate.dense is not None else candidate.pk in keyword_pks

    ranked = sorted(candidates.by_pk.values(), key=lambda c: (-c.score, c.pk))
    chosen = [c for c in ranked if passes(c)][:max_results]
    if not chosen and candidates.keyword:
        return [candidates.by_pk[pk] for pk, _ in candidates.keyword if pk in candidates.by_pk][:max_results], "keyword"
    return chosen, _source(chosen, candidates)


def _source(chosen: list[Candidate], candidates: Candidates) -> str:
    dense = {pk for pk, _ in candidates.dense}
    keyword = {pk for pk, _ in candidates.keyword}
    answered = {c.pk for c in chosen}
    if answered & dense and answered & keyword:
        return "hybrid"
    return "vector" if answered & dense else "keyword"


def memory_recall(*, owner, query: str, **filters: Any) -> dict[str, Any]:
    """The owner's earlier messages relevant to ``query``: by meaning, else by words. ``filters`` are
    those of ``recall_messages`` (agent, excluded session, result and token limits, threshold,
    strategy). Each recall leaves a trace (kind ``recall``) with its timings, for operators."""
    started = time.perf_counter()
    # The question is embedded while the keyword retriever reads the database.
    embedding = ai.embed_query_later(query, purpose="recall", owner_id=owner.id)
    stages: list[dict[str, Any]] = []
    try:
        found = recall_messages(owner=owner, query=query, query_embedding=embedding, stages=stages, **filters)
    finally:
        vector, model, embedding_ms = embedding.result()  # the model call is accounted for, whatever happened
    stages.insert(
        0, {"stage": "query", "ms": embedding_ms, "embedded": vector is not None, "model": model, "beside": "keyword"}
    )
    total_ms = ms_since(started)
    SearchTrace.objects.create(
        owner=owner,
        kind=SearchTrace.Kind.RECALL,
        query=query[:4000],
        plan={
            "agent_id": filters.get("agent_id"),
            "exclude_session_id": str(filters.get("exclude_session_id") or "") or None,
            "strategy": filters.get("strategy") or settings.RECALL_STRATEGY,
            "source": found["source"],
        },
        stages=stages,
        result_count=found["count"],
        results=[
            {
                "uri": message_uri(m["session_id"], m["id"]),
                "kind": "message",
                "origin": "conversation",
                "title": m["session_title"],
                "score": m.get("score"),
                "source": found["source"],
                "session_id": m["session_id"],
                "text": m["content"][:RESULT_TEXT_CHARS],
            }
            for m in found["messages"]
        ],
        total_ms=total_ms,
        timings=timings_of(stages, total_ms=total_ms),
    )
    return found
