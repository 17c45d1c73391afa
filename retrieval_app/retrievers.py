"""The retrievers behind find() and search(), all over one PostgreSQL.

Dense candidates come from pgvector (HNSW with iterative scan, or an exact scan for small scopes),
keyword candidates from the generated full-text columns. Flat retrieval fuses the two over chunks;
hierarchical retrieval (directory recursive retrieval) starts from the best directories
and descends, blending each child's score with its parent's until the top-k stops changing.

Every function here reads; the search service records what they did in a ``SearchTrace``.
"""

from __future__ import annotations

import heapq
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from django.conf import settings
from django.contrib.postgres.search import SearchQuery
from django.db import connection
from django.db.models import FloatField, QuerySet
from django.db.models.expressions import RawSQL

from documents_app.models import DocumentNode
from documents_app.uris import directory_ancestors
from foundation import bm25
from foundation.ai import implications_asked
from foundation.ai.memories import FAMILY, implication
from foundation.ai.memory_text import relations_named, relative_fact
from foundation.bm25 import quoted
from foundation.db import filter_sql
from foundation.vectors import has_more_rows_than, nearest_neighbours, vector_text
from retrieval_app.fusion import RRF_K, blend, reciprocal_rank
from retrieval_app.rewriting import asks_about_owner
from sessions_app.uris import memory_uri

MAX_CHECKED_LEXEMES = 16
SEED_DIRECTORIES = 10
# Directories opened together, one query a round: a descent of half the budget per round ranks as one
# of four did (bench/retrieval_eval.py, both sets) in a third of the round trips.
EXPANSIONS_PER_ROUND = 12
TRACE_CANDIDATES = 30
# A person's memories up to this many are scored exactly, all of them, in one query.
MEMORY_EXACT_SCAN_MAX_ROWS = 500
# The sections holding this many of the flat search's best chunks are opened whatever their score.
MUST_OPEN_SECTIONS = 3
# A queue priority below any directory's (-score): the sections that must be opened are expanded first.
OPEN_FIRST = -1e9
# A question in the first person: only such a question asks what a fact means for the person asking
# ("which languages are spoken in Switzerland?" is close to "The languages they speak." too).
_FIRST_PERSON = re.compile(r"\b(?:i|me|my|mine|myself)\b|\bi'", re.IGNORECASE)
# What describes the person, first among their memories when they ask about themselves: who they are
# (in this order), then their family, then the rest of their profile and preferences; the newest first
# within each.
CENTRAL_KEYS = ("name", "location", "occupation", "employer", "age", "origin", "nationality", "languages")
PERSONAL_CATEGORIES = ("profile", "preferences")
# The score such memories rank with at least, beside documents that hardly match a question with no subject.
ABOUT_OWNER_SCORE = 0.6
# A memory whose meaning the question asks for ranks at most this far below the question's similarity to
# that meaning.
MEANING_SCORE_SPREAD = 0.05
# How much less each next memory describing the person ranks with: an order, not a judgement.
ABOUT_OWNER_STEP = 0.001
ABOUT_OWNER_BOOST = "the question asks what is known about you"
AS_ASKED_BOOST = "matches the question as you asked it"
IMPLIED_BOOST = "the question asks for what it means for you: {meaning}"
_IMPLIED_BOOST_START = IMPLIED_BOOST.split("{", 1)[0]
AS_ASKED = "_as_asked"


@dataclass(frozen=True)
class Query:
    """A query as the retrievers need it: its text, its vector (None when it could not be embedded),
    PostgreSQL's stems of its words and, once the scope is known, each stem's weight there (its
    inverse document frequency: a rare name counts for more than a common word)."""

    text: str
    vector: list[float] | None
    model: str
    lexemes: tuple[str, ...]
    weights: dict[str, float] = field(default_factory=dict)

    @cached_property
    def total_weight(self) -> float:
        """The weight of all the query's stems: what a text holding every one of them holds."""
        return sum(self.weights.get(lexeme, 1.0) for lexeme in self.lexemes)

    def coverage(self, matched: Iterable[str]) -> float:
        """The share of the query's stems a text holds, each stem counted by its weight."""
        total = self.total_weight  # computed once: a descent asks it of hundreds of rows
        if not total:
            return 0.0
        weight = self.weights.get
        return sum(weight(lexeme, 1.0) for lexeme in set(matched)) / total


def weighted(query: Query, scope: QuerySet) -> Query:
    """``query`` with its stems weighted by their rarity in ``scope`` (KEYWORD_WEIGHTING=idf), or all
    alike (share)."""
    if not query.lexemes or settings.KEYWORD_WEIGHTING != "idf":
        return query
    rows, _ = bm25.collection_stats(scope)
    frequencies = bm25.document_frequencies(scope, query.lexemes)
    weights = {lexeme: bm25.idf(rows, frequencies.get(lexeme, 0)) for lexeme in query.lexemes}
    return replace(query, weights=weights)


@dataclass
class Candidate:
    """One scored row: a document node (or a memory or message, for search's other sources)."""

    uri: str
    kind: str
    parent_uri: str = ""
    doc_id: str | None = None
    row: Any = None
    dense: float | None = None
    keyword: float = 0.0
    matched: list[str] = field(default_factory=list)
    own: float = 0.0
    score: float = 0.0
    found_by: set[str] = field(default_factory=set)
    boosts: list[str] = field(default_factory=list)
    via: list[str] = field(default_factory=list)

    @property
    def source(self) -> str:
        semantic = "dense" in self.found_by or self.dense is not None
        keyword = bool(self.matched)
        if semantic and keyword:
            return "hybrid"
        return "keyword" if keyword else "semantic"

    def summary(self) -> dict[str, Any]:
        """A compact form for the trace."""
        return {
            "uri": self.uri,
            "score": round(self.score, 4),
            "own": round(self.own, 4),
            "dense": None if self.dense is None else round(self.dense, 4),
            "keyword": round(self.keyword, 4),
            "matched": self.matched,
            **({"via": self.via} if self.via else {}),
        }


def _table(queryset: QuerySet) -> str:
    return connection.ops.quote_name(queryset.model._meta.db_table)


def scored(queryset: QuerySet, query: Query) -> QuerySet:
    """``queryset`` with each row's exact cosine similarity (``dense``, NULL without a vector of the
    query's model) and the query stems it contains (``matched``)."""
    return queryset.defer("embedding", "search_vector").annotate(**_signals(queryset, query))


def _signals(queryset: QuerySet, query: Query, suffix: str = "") -> dict[str, Any]:
    """The two signals ``scored`` annotates (``dense`` and ``matched``, each name followed by ``suffix``)."""
    (dense, dense_params), (matched, matched_params) = _signal_sql(_table(queryset), query)
    # Parameters are bound; the table name comes from the model.
    return {
        "dense" + suffix: RawSQL(dense, dense_params, output_field=FloatField()),  # noqa: S611
        "matched" + suffix: RawSQL(matched, matched_params),  # noqa: S611
    }


def _signal_sql(table: str, query: Query) -> tuple[tuple[str, list[Any]], tuple[str, list[Any]]]:
    """The SQL of the two signals of a row of ``table`` (``dense``: its cosine similarity to the query,
    NULL without a vector of the query's model; ``matched``: the query stems it holds), each with its
    parameters."""
    if query.vector is not None:
        dense = f"CASE WHEN {table}.embedding_model = %s THEN 1 - ({table}.embedding <=> %s::vector) END"
        dense_params: list[Any] = [query.model, vector_text(query.vector)]
    else:
        dense, dense_params = "NULL::float", []
    # One probe of the row's tsvector per stem: far cheaper than expanding or ranking the tsvector.
    tests = ", ".join(f"CASE WHEN {table}.search_vector @@ %s::tsquery THEN %s END" for _ in query.lexemes)
    matched_params = [value for lexeme in query.lexemes for value in (quoted(lexeme), lexeme)]
    return (dense, dense_params), (f"array_remove(ARRAY[{tests}]::text[], NULL)", matched_params)


@dataclass(frozen=True)
class NodeRow:
    """A document node as ranking sees it: where it sits and its two signals, read as plain values. Its
    text is read only for the few nodes shown (``with_text``): a descent scores hundreds and shows a handful."""

    id: Any
    uri: str
    kind: str
    parent_uri: str
    document_id: Any
    dense: float | None
    matched: list[str]

    @property
    def pk(self) -> Any:
        return self.id


_NODE_FIELDS = ("id", "uri", "kind", "parent_uri", "document_id", "dense", "matched")
# What a shown node is read with: where it sits, and its tiers.
_TEXT_FIELDS = (
    "id",
    "uri",
    "kind",
    "parent_uri",
    "document_id",
    "level",
    "position",
    "title",
    "abstract",
    "overview",
    "content",
)


def candidates_shown(limit: int) -> int:
    """How many of a ranking's best candidates a search reads the text of, to fill ``limit`` results after
    its thresholds and budget: no candidate below that rank can be shown."""
    return max(3 * limit, 10)


def _own_score_sql(query: Query) -> tuple[str, list[Any]]:
    """``blend`` of a scored row's two signals (its ``dense`` and ``matched`` columns) as SQL, the same
    formula: to rank siblings before they are read."""
    weight = settings.KEYWORD_WEIGHT
    total = query.total_weight
    coverage, params = "0", []
    if query.lexemes and total:
        coverage = " + ".join("CASE WHEN %s = ANY(matched) THEN %s ELSE 0 END" for _ in query.lexemes)
        params = [value for lexeme in query.lexemes for value in (lexeme, query.weights.get(lexeme, 1.0) / total)]
    sql = f"%s * GREATEST(COALESCE(dense, 0), 0) + %s * ({coverage})"
    return sql, [1 - weight, weight, *params]


_NODES_TABLE = connection.ops.quote_name(DocumentNode._meta.db_table)
# Where a node sits, as ranking reads it; its document's id as text, the form a candidate keeps.
_NODE_COLUMNS = ", ".join(f"{_NODES_TABLE}.{column}" for column in ("id", "uri", "kind", "parent_uri"))
_NODE_COLUMNS += f", {_NODES_TABLE}.document_id::text"


@dataclass(frozen=True)
class ChunkCut:
    """Which chunks a round of descent reads back: the ``keep`` best of the round by the score they will
    have, their own blended with their parent's (``parent_scores``, by URI) with ``alpha``, and multiplied
    by ``factor`` in the ``favoured`` documents (the search's document bias, applied after the descent).
    A chunk below that rank in its round can never be among the ``keep`` best of the whole descent, with
    or without the bias; hundreds of siblings scored in PostgreSQL need not each become a candidate."""

    parent_scores: dict[str, float]
    alpha: float
    keep: int
    favoured: frozenset[str] = frozenset()
    factor: float = 1.0


def node_rows(scope: QuerySet, query: Query, *, where: tuple[str, list], cut: ChunkCut | None = None) -> list[NodeRow]:
    """The document nodes of ``scope`` that also pass ``where`` (SQL on the nodes' table, and its
    parameters), with their signals, as plain rows in one statement. With ``cut``, only its best chunks
    come back (see ``ChunkCut``); directories always do.

    Written by hand on the scope's filter: a descent asks this several times a turn, and the ORM took
    longer to build each statement than PostgreSQL to run it."""
    scope_where, scope_params = filter_sql(scope)
    (dense, dense_params), (matched, matched_params) = _signal_sql(_NODES_TABLE, query)
    condition, condition_params = where
    sql = (
        f"SELECT {_NODE_COLUMNS}, {dense} AS dense, {matched} AS matched FROM {_NODES_TABLE}"  # noqa: S608
        f" WHERE ({scope_where}) AND ({condition})"
    )
    params = [*dense_params, *matched_params, *scope_params, *condition_params]
    if cut is not None:
        own, own_params = _own_score_sql(query)
        columns = ", ".join(_NODE_FIELDS)
        parents = list(cut.parent_scores)
        # The rank computed from the signals selected: a row's vector is read and compared once, not again
        # for the ranking (OFFSET 0 keeps PostgreSQL from merging the two levels and computing the signals
        # twice). The values added are parameters.
        final = f"(%s * ({own}) + %s * parents.score)"
        final_params = [cut.alpha, *own_params, 1 - cut.alpha]
        ranks = f"row_number() OVER (PARTITION BY scored.kind ORDER BY {final} DESC, scored.uri) AS cut_rank"
        rank_params = list(final_params)
        favoured = "FALSE"
        if cut.favoured:
            # Both with the bias (what is shown) and without (what decides when the descent has settled).
            ranks += (
                f", row_number() OVER (PARTITION BY scored.kind ORDER BY {final}"
                " * CASE WHEN scored.document_id = ANY(%s::text[]) THEN %s ELSE 1 END DESC, scored.uri)"
                " AS favoured_rank"
            )
            rank_params += [*final_params, sorted(cut.favoured), cut.factor]
            favoured = "favoured_rank <= %s"
        sql = (
            f"SELECT {columns} FROM (SELECT scored.*, {ranks} FROM ({sql} OFFSET 0) AS scored"  # noqa: S608
            " JOIN unnest(%s::text[], %s::float8[]) AS parents(uri, score) ON parents.uri = scored.parent_uri"
            f") AS ranked WHERE kind <> %s OR cut_rank <= %s OR {favoured}"
        )
        params = [
            *rank_params,
            *params,
            parents,
            [cut.parent_scores[uri] for uri in parents],
            "chunk",
            cut.keep,
            *([cut.keep] if cut.favoured else []),
        ]
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        return [NodeRow(*row) for row in cursor.fetchall()]


def with_text(candidates: Sequence[Candidate]) -> list[Candidate]:
    """Loads the tiers of the document-node candidates scored without them (``NodeRow``), in one query;
    returns the candidates whose rows still exist, each with its whole row."""
    missing = [c for c in candidates if isinstance(c.row, NodeRow)]
    if not missing:
        return list(candidates)
    rows = (
        DocumentNode.objects.filter(pk__in=[c.row.pk for c in missing])
        .select_related("document")
        .only(*_TEXT_FIELDS, "document__title")
    )
    texts = {row.pk: row for row in rows}
    for candidate in missing:
        if (row := texts.get(candidate.row.pk)) is not None:
            # What the passage is part of: its text rarely repeats the product its manual is about.
            row.document_title = row.document.title
            row.dense, row.matched = candidate.row.dense, candidate.row.matched
            candidate.row = row
    # A row deleted since it was scored (its document removed or reindexed) drops out of the results.
    return [c for c in candidates if not isinstance(c.row, NodeRow)]


def _node_candidate(node, query: Query, *, keyword_weight: float) -> Candidate:
    matched = sorted(node.matched or [])
    coverage = query.coverage(matched)
    candidate = Candidate(
        uri=node.uri,
        kind=node.kind,
        parent_uri=node.parent_uri,
        doc_id=str(node.document_id),
        row=node,
        dense=node.dense,
        keyword=coverage,
        matched=matched,
    )
    candidate.own = candidate.score = blend(dense=node.dense, coverage=coverage, keyword_weight=keyword_weight)
    return candidate


def dense_uris(queryset: QuerySet, query: Query, *, limit: int, key: str = "uri") -> list[tuple[Any, float]]:
    """The rows nearest the query vector, as (key, similarity), best first."""
    if query.vector is None:
        return []
    rows = nearest_neighbours(queryset=queryset, embedding=query.vector, model_name=query.model, limit=limit, key=key)
    return [(value, 1 - distance) for value, distance in rows]


def informative_lexemes(queryset: QuerySet, lexemes: Sequence[str]) -> tuple[str, ...]:
    """The query stems worth a keyword search in ``queryset``: all of them in a small scope; in a large
    one, those found in fewer than KEYWORD_COMMON_ROWS rows.

    Ranking is per matching row, so a stem that half the corpus contains ("week", "use") would make
    the keyword side rank tens of thousands of rows for no information: the dense side already
    covers what such words mean. Counts stop at the cap and are remembered for a few minutes.
    """
    cap = settings.KEYWORD_COMMON_ROWS
    if not lexemes or not has_more_rows_than(queryset, cap):
        return tuple(lexemes)
    kept = []
    # Each stem costs a (cached) count; a long query's first stems carry its subject.
    for lexeme in lexemes[:MAX_CHECKED_LEXEMES]:
        matching = queryset.filter(search_vector=SearchQuery(quoted(lexeme), search_type="raw", config="simple"))
        if not has_more_rows_than(matching, cap - 1):
            kept.append(lexeme)
    return tuple(kept)


def keyword_uris(queryset: QuerySet, query: Query, *, limit: int, key: str = "uri") -> list[tuple[Any, float]]:
    """The rows whose text matches any informative query stem, best first, as (key, rank): BM25 by
    default (KEYWORD_RANKING), or PostgreSQL's cover density (ts_rank_cd)."""
    if settings.KEYWORD_RANKING == "bm25":
        return bm25.bm25_rank(queryset, query.lexemes, limit=limit, key=key)
    lexemes = informative_lexemes(queryset, query.lexemes)
    if not lexemes:
        return []
    tsquery = " | ".join(quoted(lexeme) for lexeme in lexemes)
    table = _table(queryset)
    rows = (
        queryset.filter(search_vector=SearchQuery(tsquery, search_type="raw", config="simple"))
        .annotate(
            kw_rank=RawSQL(  # noqa: S611 (as above)
                f"ts_rank_cd({table}.search_vector, %s::tsquery, 32)", [tsquery], output_field=FloatField()
            )
        )
        .order_by("-kw_rank", key)
        .values_list(key, "kw_rank")[:limit]
    )
    return list(rows)


def score_nodes(queryset: QuerySet, query: Query, uris: Iterable[str]) -> dict[str, Candidate]:
    uris = list(dict.fromkeys(uris))
    if not uris:
        return {}
    rows = node_rows(queryset, query, where=(f"{_NODES_TABLE}.uri = ANY(%s)", [uris]))
    # Read once: a descent scores hundreds of nodes, and each read of a setting has a cost.
    weight = settings.KEYWORD_WEIGHT
    return {node.uri: _node_candidate(node, query, keyword_weight=weight) for node in rows}


@dataclass
class Retrieval:
    """What a retriever returns: the ranked candidates and the stages it went through, for the trace."""

    candidates: list[Candidate]
    stages: list[dict[str, Any]] = field(default_factory=list)
    visited: list[str] = field(default_factory=list)


def _stage(name: str, started: float, **details: Any) -> dict[str, Any]:
    return {"stage": name, "ms": round((time.perf_counter() - started) * 1000, 2), **details}


def _trace_list(pairs: Sequence[tuple[str, float]]) -> list[dict[str, Any]]:
    return [{"uri": uri, "score": round(float(score), 4)} for uri, score in pairs[:TRACE_CANDIDATES]]


@dataclass(frozen=True)
class KeywordFound:
    """The keyword side of a document search, found while the question's vector is still being computed
    (it needs only the question's stems): the best chunks and, for a descent's seeds, the best
    directories (None when the search does not descend), and how long finding them took."""

    chunks: list[tuple[Any, float]]
    directories: list[tuple[Any, float]] | None
    ms: float


def keyword_found(scope: QuerySet, query: Query, *, limit: int, descends: bool) -> KeywordFound:
    """``KeywordFound`` for ``query`` (its stems; its vector is not needed) in ``scope``, for a search of
    ``limit`` results."""
    started = time.perf_counter()
    chunks = keyword_uris(scope.filter(kind="chunk"), query, limit=max(limit, settings.RETRIEVAL_CANDIDATES))
    directories = keyword_uris(scope.exclude(kind="chunk"), query, limit=SEED_DIRECTORIES) if descends else None
    return KeywordFound(chunks=chunks, directories=directories, ms=round((time.perf_counter() - started) * 1000, 2))


def chunk_candidates(
    scope: QuerySet,
    query: Query,
    *,
    limit: int,
    fusion: str,
    retrievers: Sequence[str] = ("dense", "keyword"),
    found: KeywordFound | None = None,
) -> Retrieval:
    """Flat retrieval over the chunks in scope: dense and keyword candidates, fused. ``found``: the keyword
    candidates, when they were found already (``keyword_found``).

    ``fusion="blend"`` rescores the union of both lists exactly on both signals; ``"rrf"`` sums
    reciprocal ranks (k=60), scaled so that first in both lists scores 1.
    """
    chunks = scope.filter(kind="chunk")
    pool = max(limit, settings.RETRIEVAL_CANDIDATES)
    stages = []
    started = time.perf_counter()
    dense = dense_uris(chunks, query, limit=pool) if "dense" in retrievers else []
    stages.append(_stage("dense", started, retriever="pgvector cosine", candidates=_trace_list(dense)))
    started = time.perf_counter()
    if "keyword" not in retrievers:
        keyword = []
    elif found is not None:
        keyword = found.chunks
    else:
        keyword = keyword_uris(chunks, query, limit=pool)
    stage = _stage(
        "keyword",
        started,
        retriever="postgres full text",
        terms=list(query.lexemes),
        candidates=_trace_list(keyword),
    )
    if found is not None and "keyword" in retrievers:
        stage.update(ms=found.ms, while_embedding=True)
    stages.append(stage)
    started = time.perf_counter()
    candidates = score_nodes(chunks, query, [uri for uri, _ in dense] + [uri for uri, _ in keyword])
    # A row deleted between the two reads (a document removed or reindexed meanwhile) is just gone.
    for name, found in (("dense", dense), ("keyword", keyword)):
        for uri, _ in found:
            if uri in candidates:
                candidates[uri].found_by.add(name)
    if fusion == "rrf":
        lists = [ranked for ranked in (dense, keyword) if ranked]
        ranks = reciprocal_rank([[uri for uri, _ in ranked] for ranked in lists])
        best = len(lists) / (RRF_K + 1) if lists else 1.0
        for uri, candidate in candidates.items():
            candidate.own = candidate.score = ranks.get(uri, 0.0) / best
    elif retrievers == ("dense",) or list(retrievers) == ["dense"]:
        for candidate in candidates.values():
            candidate.own = candidate.score = max(candidate.dense or 0.0, 0.0)
    elif list(retrievers) == ["keyword"]:
        for candidate in candidates.values():
            candidate.own = candidate.score = candidate.keyword
    ranked = sorted(candidates.values(), key=lambda c: (-c.score, c.uri))
    stages.append(_stage("fusion", started, method=fusion, candidates=[c.summary() for c in ranked[:TRACE_CANDIDATES]]))
    return Retrieval(candidates=ranked, stages=stages)


def hierarchical_candidates(
    scope: QuerySet,
    query: Query,
    *,
    limit: int,
    favoured: frozenset[str] = frozenset(),
    factor: float = 1.0,
    found: KeywordFound | None = None,
) -> Retrieval:
    """Directory recursive retrieval.

    Seeds are the best directories by either retriever, plus the sections holding the best chunks of a
    flat search. Their scores propagate down from the document: a node's score is
    ``alpha * own + (1 - alpha) * parent's``. The best unvisited directories are expanded a few at a
    time; a child directory scoring at least DIRECTORY_SCORE_THRESHOLD joins the queue. Descent stops
    when the top ``limit`` chunks have not changed for RETRIEVAL_CONVERGENCE_ROUNDS rounds, when no
    directory is left, or after RETRIEVAL_MAX_DIRECTORIES. ``favoured`` documents (their ids) will have
    their scores multiplied by ``factor`` once ranked (the search's document bias): each round keeps
    the chunks that could then be shown. ``found``: the keyword side, when it was found already.
    """
    alpha = settings.SCORE_PROPAGATION_ALPHA
    threshold = settings.DIRECTORY_SCORE_THRESHOLD
    flat = chunk_candidates(scope, query, limit=limit, fusion="blend", found=found)
    stages = list(flat.stages)

    started = time.perf_counter()
    keyword_dirs = found.directories if found is not None else None
    directories, seeds = _seed_directories(
        scope.exclude(kind="chunk"), query, flat, alpha=alpha, keyword_dirs=keyword_dirs
    )
    stages.append(
        _stage(
            "directories",
            started,
            seeds=[d.summary() for d in sorted(seeds, key=lambda d: -d.score)[:TRACE_CANDIDATES]],
        )
    )

    started = time.perf_counter()
    descent = _descent_start(seeds, flat, threshold=threshold)
    _descend(scope, query, descent, directories, limit=limit, favoured=favoured, factor=factor)
    _keep_flat_passages(flat, descent.chunks, directories, alpha=alpha)
    ranked = sorted(descent.chunks.values(), key=lambda c: (-c.score, c.uri))
    stages.append(
        _stage(
            "descent",
            started,
            alpha=alpha,
            directory_threshold=threshold,
            rounds=descent.rounds,
            converged=descent.converged,
            directories_below_threshold=descent.below[:TRACE_CANDIDATES],
            candidates=[c.summary() for c in ranked[:TRACE_CANDIDATES]],
        )
    )
    return Retrieval(candidates=ranked, stages=stages, visited=descent.visited)


@dataclass
class _Descent:
    """Where a hierarchical descent stands: the directories still to expand (a heap of ``(-score, uri)``),
    those below the threshold, those expanded, the chunks reached, and how long the top has held."""

    queue: list[tuple[float, str]]
    below: list[str]
    visited: list[str] = field(default_factory=list)
    chunks: dict[str, Candidate] = field(default_factory=dict)
    rounds: list[dict[str, Any]] = field(default_factory=list)
    previous: list[str] = field(default_factory=list)
    stable: int = 0

    @property
    def converged(self) -> bool:
        return self.stable >= settings.RETRIEVAL_CONVERGENCE_ROUNDS


def _inherit(node: Candidate, parent: Candidate, *, alpha: float) -> None:
    """Blends ``node``'s own score with its parent's final one, and notes the path it was reached by."""
    node.score = alpha * node.own + (1 - alpha) * parent.score
    node.via = [*parent.via, parent.uri]


def _seed_directories(
    directories: QuerySet,
    query: Query,
    flat: Retrieval,
    *,
    alpha: float,
    keyword_dirs: list[tuple[Any, float]] | None = None,
) -> tuple[dict[str, Candidate], list[Candidate]]:
    """The seed directories (the best by either retriever, and the sections of the best flat chunks), each
    scored with its ancestors: every directory scored so far by URI, and the seeds in order.
    ``keyword_dirs``: the best by keywords, when they were found already."""
    dense_dirs = dense_uris(directories, query, limit=SEED_DIRECTORIES)
    if keyword_dirs is None:
        keyword_dirs = keyword_uris(directories, query, limit=SEED_DIRECTORIES)
    seed_uris = [uri for uri, _ in dense_dirs] + [uri for uri, _ in keyword_dirs]
    seed_uris += [c.parent_uri for c in flat.candidates[:SEED_DIRECTORIES] if c.parent_uri]
    wanted = {ancestor for uri in seed_uris for ancestor in directory_ancestors(uri)} | set(seed_uris)
    scored_dirs = score_nodes(directories, query, wanted)
    # Top-down, so that every parent's final score is known before its children's.
    for uri in sorted(scored_dirs, key=lambda u: u.count("/")):
        directory = scored_dirs[uri]
        parent = scored_dirs.get(directory.parent_uri)
        if parent is not None:
            _inherit(directory, parent, alpha=alpha)
    return scored_dirs, [scored_dirs[uri] for uri in dict.fromkeys(seed_uris) if uri in scored_dirs]


def _descent_start(seeds: list[Candidate], flat: Retrieval, *, threshold: float) -> _Descent:
    """The first queue: the seeds that reach the threshold, and the sections that must be opened first."""
    # The sections of the very best chunks are always opened, so a strong passage in a weak section is
    # still found; other directories must reach the threshold.
    must_open = {c.parent_uri for c in flat.candidates[:MUST_OPEN_SECTIONS]}
    # Those go first, whatever their score; the rest in order of score.
    queue = [
        (OPEN_FIRST if d.uri in must_open else -d.score, d.uri)
        for d in seeds
        if d.score >= threshold or d.uri in must_open
    ]
    heapq.heapify(queue)
    return _Descent(queue=queue, below=[d.uri for d in seeds if d.score < threshold and d.uri not in must_open])


def _descend(
    scope: QuerySet,
    query: Query,
    descent: _Descent,
    directories: dict[str, Candidate],
    *,
    limit: int,
    favoured: frozenset[str],
    factor: float,
) -> None:
    """Expands the best directories of ``descent``, a batch a round, until the top ``limit`` chunks have
    settled, no directory is left or the budget (RETRIEVAL_MAX_DIRECTORIES) is spent."""
    budget = settings.RETRIEVAL_MAX_DIRECTORIES
    threshold = settings.DIRECTORY_SCORE_THRESHOLD
    while descent.queue and len(descent.visited) < budget:
        batch = _next_batch(descent, budget=budget)
        if not batch:
            break
        cut = ChunkCut(
            parent_scores={uri: directories[uri].score for uri in batch},
            alpha=settings.SCORE_PROPAGATION_ALPHA,
            keep=max(candidates_shown(limit), TRACE_CANDIDATES),
            favoured=favoured,
            factor=factor,
        )
        _expand(scope, query, batch, descent, directories, cut=cut, threshold=threshold, limit=limit)
        if descent.converged:
            break


def _next_batch(descent: _Descent, *, budget: int) -> list[str]:
    """The best directories not yet expanded, at most EXPANSIONS_PER_ROUND and within what the budget leaves."""
    batch: list[str] = []
    while descent.queue and len(batch) < min(EXPANSIONS_PER_ROUND, budget - len(descent.visited)):
        _, uri = heapq.heappop(descent.queue)
        if uri not in descent.visited and uri not in batch:
            batch.append(uri)
    return batch


def _expand(
    scope: QuerySet,
    query: Query,
    batch: list[str],
    descent: _Descent,
    directories: dict[str, Candidate],
    *,
    cut: ChunkCut,
    threshold: float,
    limit: int,
) -> None:
    """One round of descent: scores the children of ``batch`` (one query, which reads back the chunks
    ``cut`` keeps), queues the child directories that reach the threshold, and counts how many rounds
    the top ``limit`` chunks have held."""
    descent.visited += batch
    alpha = cut.alpha
    children_of = (f"{_NODES_TABLE}.parent_uri = ANY(%s)", [batch])
    rows = node_rows(scope, query, where=children_of, cut=cut)
    weight = settings.KEYWORD_WEIGHT
    children = [_node_candidate(node, query, keyword_weight=weight) for node in rows]
    for child in children:
        _inherit(child, directories[child.parent_uri], alpha=alpha)
        child.found_by |= {"dense"} if child.dense is not None else set()
        child.found_by |= {"keyword"} if child.matched else set()
        if child.kind == "chunk":
            descent.chunks[child.uri] = child
        else:
            directories[child.uri] = child
            if child.score >= threshold and child.uri not in descent.visited:
                heapq.heappush(descent.queue, (-child.score, child.uri))
            elif child.score < threshold:
                descent.below.append(child.uri)
    top = [c.uri for c in sorted(descent.chunks.values(), key=lambda c: (-c.score, c.uri))[:limit]]
    descent.stable = descent.stable + 1 if top == descent.previous and len(top) >= limit else 0
    descent.previous = top
    descent.rounds.append({"expanded": batch, "children": len(children), "top": top, "stable_rounds": descent.stable})


def _keep_flat_passages(
    flat: Retrieval, chunks: dict[str, Candidate], directories: dict[str, Candidate], *, alpha: float
) -> None:
    """Adds to ``chunks`` every passage of the flat ranking the descent did not reach, scored within its
    section like the rest."""
    # A descent that stops before reaching a passage (a library of many short documents has as many
    # directories as passages) never loses what a flat search would have returned.
    for candidate in flat.candidates:
        parent = directories.get(candidate.parent_uri)
        if candidate.uri not in chunks and parent is not None:
            _inherit(candidate, parent, alpha=alpha)
            chunks[candidate.uri] = candidate


def _personal_first(memories: QuerySet, limit: int) -> dict[int, float]:
    """The memories that describe the person best (see CENTRAL_KEYS), each with the score it ranks with at
    least: ABOUT_OWNER_SCORE for the first, a little less for each after it, so that they come in that order."""
    rows = memories.order_by("-updated_at", "-id").values_list("id", "category", "key")[:MEMORY_EXACT_SCAN_MAX_ROWS]
    ranked = sorted(rows, key=lambda row: _centrality(row[1], row[2]))[:limit]  # stable: the newest first
    return {memory_id: ABOUT_OWNER_SCORE - place * ABOUT_OWNER_STEP for place, (memory_id, _, _) in enumerate(ranked)}


def _centrality(category: str, key: str) -> tuple[int, int]:
    """How early a memory comes in describing the person: (group, place within it); lower is earlier."""
    if category == "profile" and key in CENTRAL_KEYS:
        return 0, CENTRAL_KEYS.index(key)
    if implication(category, key) == FAMILY:
        return 1, 0
    return (2 if category in PERSONAL_CATEGORIES else 3), 0


def _memory_candidate(memory, query: Query, about_owner: dict[int, float], suffix: str = "") -> Candidate:
    """``memory`` scored against ``query`` from the signals ``scored`` read (named with ``suffix``)."""
    dense = getattr(memory, "dense" + suffix)
    matched = sorted(getattr(memory, "matched" + suffix) or [])
    coverage = query.coverage(matched)
    candidate = Candidate(
        uri=memory_uri(memory.owner_id, memory.category, memory.id),
        kind="memory",
        row=memory,
        dense=dense,
        keyword=coverage,
        matched=matched,
    )
    candidate.own = candidate.score = blend(dense=dense, coverage=coverage)
    candidate.found_by = {"dense"} if dense is not None else set()
    candidate.found_by |= {"keyword"} if matched else set()
    if memory.id in about_owner:
        candidate.score = max(candidate.score, about_owner[memory.id])
        candidate.boosts.append(ABOUT_OWNER_BOOST)
    return candidate


def _meanings_asked(readings: Sequence[Query]) -> dict[str, float]:
    """What kinds of facts the question asks the meaning of, by the closer of its readings; only a reading
    in the first person asks it."""
    implied: dict[str, float] = {}
    for reading in readings:
        if _FIRST_PERSON.search(reading.text):
            for meaning, similarity in implications_asked(reading.vector, reading.model).items():
                implied[meaning] = max(similarity, implied.get(meaning, similarity))
    return implied


def _asked_for(found: dict[int, Candidate], implied: dict[str, float], *, relations: set[str]) -> set[int]:
    """The ids of the memories whose meaning for the person (``implication``) the question asks for, each
    marked with why it is kept and ranked at least about as high as the question is close to that meaning
    (within MEANING_SCORE_SPREAD, the closer to the question's own words the higher): "what do I do for a
    living?" is about a job, whatever "Lives in Utrecht." shares with its words. A relative's fact of
    health or diet is asked for when the question names that relative (``relations``): "what can my son
    not eat?" asks for his egg allergy, where "what should I avoid eating?" does not."""
    asked_for: set[int] = set()
    if not implied:
        return asked_for
    for memory_id, candidate in found.items():
        meaning = implication(candidate.row.category, candidate.row.key)
        if meaning == FAMILY and meaning not in implied and relations:
            relation, theirs = relative_fact(candidate.row.key)
            meaning = theirs if relation in relations else meaning
        if meaning in implied:
            asked_for.add(memory_id)
            candidate.boosts.append(IMPLIED_BOOST.format(meaning=meaning.rstrip(".").lower()))
            floor = implied[meaning] - MEANING_SCORE_SPREAD * (1 - min(max(candidate.own, 0.0), 1.0))
            candidate.score = max(candidate.score, floor)
    return asked_for


def asked_for_its_meaning(candidate: Candidate) -> bool:
    """Whether a memory was kept because the question asks for what it means for the person."""
    return any(boost.startswith(_IMPLIED_BOOST_START) for boost in candidate.boosts)


def _memories_kept(found: dict[int, Candidate], *, floor: float, always: set[int]) -> list[Candidate]:
    """The memories similar enough to the question (``floor``), holding half its stems, or kept ``always``."""
    return [c for c in found.values() if (c.dense or 0.0) >= floor or c.keyword >= 0.5 or c.row.id in always]


def memory_candidates(memories: QuerySet, query: Query, *, limit: int, as_asked: Query | None = None) -> Retrieval:
    """Long-term memories relevant to the query, by either retriever, scored like document nodes.

    A person's memories are usually few: up to MEMORY_EXACT_SCAN_MAX_ROWS of them are all scored
    exactly in one query; more are narrowed by the two retrievers first. A memory is kept when its
    similarity reaches MEMORY_SIMILARITY_THRESHOLD or it holds at least half the query's stems; the
    trace lists the rest as cut. A question about the person as a whole (``asks_about_owner``) keeps
    what describes them best, their profile and preferences first, ranked at least ABOUT_OWNER_SCORE. A
    question that asks for what a kind of fact means for the person (``ai.implications_asked``: "what
    should I avoid eating?") keeps every fact of that kind, ranked about as high as the question is close to
    that meaning (``_asked_for``): a shellfish allergy as well as a peanut allergy, however differently the
    model places the two words; only a question in the first person asks that.

    ``as_asked`` is the question as the person put it, when ``query`` is a rewrite of it: each memory
    then scores by the better of the two readings. A rewrite adds the conversation's subject to a short
    question, and a guess at the subject must not hide what the person asked about themselves ("What
    should I avoid eating?" just after they gave their name, their city and their allergy).
    """
    started = time.perf_counter()
    if as_asked is not None and as_asked.text == query.text:
        as_asked = None  # not rewritten: one reading
    readings = [query] + ([as_asked] if as_asked is not None else [])
    about_owner: dict[int, float] = {}
    if any(asks_about_owner(reading.text) for reading in readings):
        about_owner = _personal_first(memories, limit)
    implied = _meanings_asked(readings)
    if has_more_rows_than(memories, MEMORY_EXACT_SCAN_MAX_ROWS):
        ids = list(about_owner)
        for reading in readings:
            ids += [i for i, _ in dense_uris(memories, reading, limit=limit, key="id")]
            ids += [i for i, _ in keyword_uris(memories, reading, limit=limit, key="id")]
        memories = memories.filter(id__in=ids)
    rows = scored(memories, query)
    if as_asked is not None:
        rows = rows.annotate(**_signals(memories, as_asked, suffix=AS_ASKED))
    found: dict[int, Candidate] = {}
    for memory in rows:
        found[memory.id] = _memory_candidate(memory, query, about_owner)
        if as_asked is not None:
            better = _memory_candidate(memory, as_asked, about_owner, suffix=AS_ASKED)
            if better.score > found[memory.id].score:
                better.boosts.append(AS_ASKED_BOOST)
                found[memory.id] = better
    floor = settings.MEMORY_SIMILARITY_THRESHOLD
    relations = relations_named(" ".join(reading.text for reading in readings))
    asked_for = _asked_for(found, implied, relations=relations)
    kept = _memories_kept(found, floor=floor, always=set(about_owner) | asked_for)
    ranked = sorted(kept, key=lambda c: (-c.score, c.uri))[:limit]
    cut = [c.summary() for c in found.values() if c not in ranked]
    stage = _stage(
        "memories",
        started,
        threshold=floor,
        readings=[reading.text for reading in readings],
        asks_for=sorted(implied),
        candidates=[c.summary() for c in ranked],
        cut=cut[:TRACE_CANDIDATES],
    )
    return Retrieval(candidates=ranked, stages=[stage])
