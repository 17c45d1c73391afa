"""Writes for retrieval: embedding rows of any embedded model, and find() and search(), which record
what they did as a SearchTrace."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import connections, transaction
from django.db.models import Q, QuerySet

from config.exceptions import InvalidInputError
from retrieval_app import ai, retrievers, rewriting
from retrieval_app.exceptions import QueryTooLong
from retrieval_app.models import SearchTrace
from retrieval_app.selectors import session_summary_text


def embed_rows(
    *,
    queryset: QuerySet,
    text_of: Callable[[object], str],
    purpose: str,
    text_fields: tuple[str, ...],
    batch_size: int = 64,
    restale: bool = False,
    progress: Callable[[int], None] | None = None,
) -> int:
    """Embeds the rows of ``queryset`` that have no vector from the configured model, a batch at a time.

    Idempotent: rows already embedded by the configured model are skipped, so a retried or duplicated
    task does no work twice. With ``restale``, rows embedded by another model are re-embedded too (a
    model change). Raises ``ai.EmbeddingError`` if the backend fails; batches done before stay done.
    Returns the number of rows embedded; ``progress`` is told after each batch.
    """
    model = ai.active_embedding_model()
    stale = Q(embedding__isnull=True) | ~Q(embedding_model=model) if restale else Q(embedding__isnull=True)
    pending = queryset.filter(stale).defer("embedding").order_by("pk")
    done, last_pk = 0, None
    while True:
        batch = list((pending.filter(pk__gt=last_pk) if last_pk is not None else pending)[:batch_size])
        if not batch:
            return done
        owners = {getattr(row, "owner_id", None) for row in batch}
        vectors, made_by = ai.embed_texts(
            [text_of(row) for row in batch], purpose=purpose, owner_id=owners.pop() if len(owners) == 1 else None
        )
        rows = queryset.model.objects
        with transaction.atomic():
            for row, vector in zip(batch, vectors, strict=True):
                unchanged = {field: getattr(row, field) for field in text_fields}
                done += rows.filter(pk=row.pk, **unchanged).update(embedding=vector, embedding_model=made_by)
        last_pk = batch[-1].pk
        if progress:
            progress(len(batch))


def count_unembedded(*, queryset: QuerySet, restale: bool = False) -> int:
    model = ai.active_embedding_model()
    stale = Q(embedding__isnull=True) | ~Q(embedding_model=model) if restale else Q(embedding__isnull=True)
    return queryset.filter(stale).count()


# --- find() and search() ----------------------------------------------------------------------------------

logger = logging.getLogger(__name__)


def release_database_connections() -> None:
    """Returns this thread's connections to the pool before a long wait on a model, so that waiting
    turns do not starve everyone else. (Not inside a transaction, which a caller may own.)"""
    for connection in connections.all(initialized_only=True):
        if not connection.in_atomic_block:
            connection.close()


MODES = ("hierarchical", "flat")
FUSIONS = ("blend", "rrf")
RETRIEVERS = ("dense", "keyword")


@dataclass
class SearchOptions:
    """How a search runs; every field defaults to its setting, and the evaluation varies them."""

    mode: str = ""
    fusion: str = "blend"
    retrievers: tuple[str, ...] = RETRIEVERS
    rewrite: bool | None = None
    document_bias: bool = True
    include_memories: bool = True
    max_tokens: int | None = None


@dataclass
class _Run:
    """One search in progress: what it has done so far, in the order the trace shows it."""

    owner: Any
    kind: str
    query: str
    started: float = field(default_factory=time.perf_counter)
    stages: list[dict[str, Any]] = field(default_factory=list)
    plan: dict[str, Any] = field(default_factory=dict)

    def stage(self, name: str, started: float, **details: Any) -> None:
        self.stages.append({"stage": name, "ms": round((time.perf_counter() - started) * 1000, 2), **details})


def _validated_query(query: str) -> str:
    if not isinstance(query, str) or not query.strip():
        raise InvalidInputError("query must not be empty.")
    if len(query) > settings.QUERY_MAX_CHARS:
        raise QueryTooLong(details={"max_chars": settings.QUERY_MAX_CHARS, "chars": len(query)})
    return query.strip()


def _embedded_query(run: _Run, text: str) -> retrievers.Query:
    started = time.perf_counter()
    model = ai.active_embedding_model()
    vector = None
    try:
        vector, model = ai.embed_query(text, purpose=f"{run.kind}_query", owner_id=run.owner.id)
    except ai.EmbeddingError as exc:
        # Keyword search still answers; the trace says why the dense side is missing.
        run.plan["dense_unavailable"] = str(exc)[:300]
    lexemes = retrievers.query_lexemes(text)
    run.stage("query", started, embedded=vector is not None, model=model, terms=list(lexemes))
    return retrievers.Query(text=text, vector=vector, model=model, lexemes=lexemes)


def _match_reason(candidate: retrievers.Candidate, query: retrievers.Query) -> str:
    parts = []
    if candidate.dense is not None:
        parts.append(f"semantic similarity {candidate.dense:.2f}")
    if candidate.matched:
        parts.append(f"keywords {', '.join(candidate.matched)} ({len(candidate.matched)}/{len(query.lexemes)} terms)")
    if candidate.via:
        parts.append(f"inside {candidate.via[-1].rsplit('/', 1)[-1]} (score blended with its parents)")
    parts += candidate.boosts
    found = " and ".join(sorted(candidate.found_by)) or "the retrievers"
    return f"found by {found}: " + "; ".join(parts) if parts else f"found by {found}"


def _node_hit(candidate: retrievers.Candidate, query: retrievers.Query) -> dict[str, Any]:
    node = candidate.row
    reason = _match_reason(candidate, query)
    if node.overview:
        text, level = node.overview, "L1"
    elif node.abstract:
        text, level = node.abstract, "L0"
    else:
        text, level = reason, "match_reason"
    return {
        "uri": node.uri,
        "doc_id": str(node.document_id),
        "chunk_id": str(node.id),
        "level": level,
        "text": text,
        "abstract": node.abstract,
        "overview": node.overview,
        "content": node.content,
        "title": node.title,
        "kind": node.kind,
        "origin": "document",
        "score": round(candidate.score, 4),
        "source": candidate.source,
        "match_reason": reason,
    }


def _scope(run: _Run, target_uri: str | None) -> tuple[str, QuerySet]:
    from documents_app.selectors import node_scope

    scope_uri, nodes = node_scope(owner=run.owner, uri=target_uri)
    run.plan["target_uri"] = scope_uri
    return scope_uri, nodes


def _retrieve_documents(
    run: _Run, query: retrievers.Query, nodes: QuerySet, *, limit: int, options: SearchOptions
) -> list[retrievers.Candidate]:
    mode = options.mode or settings.RETRIEVAL_MODE
    if mode not in MODES or options.fusion not in FUSIONS or not set(options.retrievers) <= set(RETRIEVERS):
        raise InvalidInputError("Unknown retrieval mode, fusion or retriever.")
    run.plan.update(mode=mode, fusion=options.fusion, retrievers=list(options.retrievers))
    pool = max(limit, settings.RETRIEVAL_CANDIDATES)
    if mode == "hierarchical" and tuple(options.retrievers) == RETRIEVERS:
        # Descent stops once the results asked for are settled; the rest of the pool is a by-product.
        retrieval = retrievers.hierarchical_candidates(nodes, query, limit=limit)
        run.plan["directories_visited"] = retrieval.visited
    else:
        retrieval = retrievers.chunk_candidates(
            nodes, query, limit=pool, fusion=options.fusion, retrievers=tuple(options.retrievers)
        )
    run.stages += retrieval.stages
    return retrieval.candidates


def _head(candidates: list[retrievers.Candidate], limit: int) -> list[retrievers.Candidate]:
    """Enough of the final ranking to fill the results after thresholds, with their tiers loaded."""
    return retrievers.with_text(candidates[: max(3 * limit, 10)])


def _cut_by_threshold(run: _Run, hits: list[dict], threshold: float | None) -> list[dict]:
    if threshold is None:
        return hits
    kept = [hit for hit in hits if hit["score"] >= threshold]
    cut = [{"uri": hit["uri"], "score": hit["score"]} for hit in hits if hit["score"] < threshold]
    run.stages.append({"stage": "score_threshold", "threshold": threshold, "cut": cut[:50], "ms": 0.0})
    return kept


def _cut_by_budget(run: _Run, hits: list[dict], max_tokens: int) -> list[dict]:
    """Whole hits while their text fits the token budget; the trace lists what did not."""
    kept, used, cut = [], 0, []
    for hit in hits:
        tokens = ai.estimate_tokens(hit["text"])
        if used + tokens > max_tokens and kept:
            cut.append({"uri": hit["uri"], "tokens": tokens})
            continue
        kept.append(hit)
        used += tokens
    run.stages.append({"stage": "token_budget", "max_tokens": max_tokens, "used": used, "cut": cut, "ms": 0.0})
    return kept


def _finish(
    run: _Run, *, hits: list[dict], session=None, rewrite: rewriting.Rewrite | None = None, debug: bool
) -> dict[str, Any]:
    total_ms = round((time.perf_counter() - run.started) * 1000, 2)
    trace = SearchTrace.objects.create(
        owner=run.owner,
        session=session,
        kind=run.kind,
        query=run.query,
        rewritten_query=rewrite.query if rewrite and rewrite.rewritten else "",
        rewrite_decision=rewrite.as_dict() if rewrite else {},
        target_uri=run.plan.get("target_uri", ""),
        plan=run.plan,
        stages=run.stages,
        document_ids=sorted({uuid.UUID(h["doc_id"]) for h in hits if h.get("doc_id")}),
        result_count=len(hits),
        total_ms=total_ms,
    )
    answer: dict[str, Any] = {"results": hits, "trace_id": str(trace.id)}
    if debug:
        answer["search_trace"] = search_trace_dict(trace)
    return answer


def search_trace_dict(trace: SearchTrace) -> dict[str, Any]:
    return {
        "id": str(trace.id),
        "kind": trace.kind,
        "query": trace.query,
        "target_uri": trace.target_uri,
        "rewrite": trace.rewrite_decision,
        "rewritten_query": trace.rewritten_query,
        "plan": trace.plan,
        "stages": trace.stages,
        "result_count": trace.result_count,
        "total_ms": trace.total_ms,
    }


def retrieval_find(
    *,
    owner,
    query: str,
    target_uri: str | None = None,
    limit: int = 5,
    score_threshold: float | None = None,
    debug: bool = False,
    options: SearchOptions | None = None,
) -> dict[str, Any]:
    """Documents only, no session: the best chunks under ``target_uri`` (the user root when empty)."""
    options = options or SearchOptions()
    run = _Run(owner=owner, kind=SearchTrace.Kind.FIND, query=_validated_query(query))
    _, nodes = _scope(run, target_uri)
    embedded = _embedded_query(run, run.query)
    candidates = _retrieve_documents(run, embedded, nodes, limit=limit, options=options)
    hits = [_node_hit(c, embedded) for c in _head(candidates, limit)]
    hits = _cut_by_threshold(run, hits, score_threshold)[:limit]
    hits = _cut_by_budget(run, hits, options.max_tokens or settings.SEARCH_MAX_TOKENS)
    return _finish(run, hits=hits, debug=debug)


def _rewrite_context(*, owner, session, query: str) -> tuple[rewriting.RewriteContext, dict[str, Any]]:
    """Seed 000's session context and seed 001's working set, as the rewriter needs them."""
    from documents_app.models import Document, DocumentNode
    from sessions_app.selectors import session_context_for_search
    from sessions_app.services import working_set_get

    context = session_context_for_search(
        session=session, query=query, max_archives=3, max_messages=settings.HISTORY_MAX_TURNS
    )
    working_set = working_set_get(session_id=str(session.id))
    doc_ids = [_as_uuid(d) for d in working_set.active_documents]
    sections = DocumentNode.objects.filter(owner=owner, uri__in=working_set.active_sections)
    section_rows = {
        uri: (title, str(doc_id)) for uri, title, doc_id in sections.values_list("uri", "title", "document_id")
    }
    wanted = {d for d in doc_ids if d} | {uuid.UUID(doc_id) for _, doc_id in section_rows.values()}
    titles = {
        str(doc.id): doc.title or doc.filename
        for doc in Document.objects.filter(owner=owner, id__in=wanted).only("title", "filename")
    }
    # "the Warranty section of the Lumen K2 manual" says far more to a search than "Warranty".
    section_titles = {
        uri: f"{title} section of {titles[doc_id]}" if titles.get(doc_id) and title != titles[doc_id] else title
        for uri, (title, doc_id) in section_rows.items()
    }
    recent = context["recent_messages"]
    if recent and recent[-1]["role"] == "user" and recent[-1]["content"].strip() == query.strip():
        recent = recent[:-1]  # a chat turn records its message first; it is not its own antecedent
    rewrite_context = rewriting.RewriteContext(
        recent_turns=[(m["role"], m["content"]) for m in recent],
        summary=session_summary_text(context),
        resolved_terms=working_set.resolved_terms,
        active_documents=[(str(d), titles[str(d)]) for d in doc_ids if d and str(d) in titles],
        active_sections=[(uri, section_titles[uri]) for uri in working_set.active_sections if uri in section_titles],
    )
    return rewrite_context, {
        "summary_chars": len(rewrite_context.summary),
        "archive_summaries": len(context["summaries"]),
        "recent_messages": len(recent),
        "working_set": working_set.as_dict(),
    }


def _as_uuid(value: str) -> uuid.UUID | None:
    try:
        return uuid.UUID(str(value).rstrip("/").rsplit("/", 1)[-1])
    except ValueError:
        return None


def _rewrite(run: _Run, query: str, context: rewriting.RewriteContext, options: SearchOptions) -> rewriting.Rewrite:
    started = time.perf_counter()
    enabled = settings.ENABLE_QUERY_REWRITING if options.rewrite is None else options.rewrite
    decision = rewriting.decide(query, context, enabled=enabled)
    if decision.signals and not context.empty and enabled:
        engine = ai.text_engine()
        try:
            if hasattr(engine, "complete"):
                release_database_connections()  # the model may take seconds; the pool should not wait
                decision = rewriting.rewrite_with_llm(decision, context, engine=engine, owner_id=run.owner.id)
            else:
                decision = rewriting.resolve(decision, context)
        except Exception as exc:  # a rewrite is an improvement, never a reason for a search to fail
            logger.exception("query rewrite failed")
            decision = rewriting.Rewrite(
                query=query,
                signals=decision.signals,
                reason=decision.reason,
                error=f"rewrite failed ({type(exc).__name__}); searched with the original query",
            )
    run.stage("rewrite", started, **decision.as_dict(), query=decision.query)
    return decision


def _apply_document_bias(run: _Run, candidates: list[retrievers.Candidate], active: set[str]) -> None:
    started = time.perf_counter()
    factor = 1 + settings.DOCUMENT_BIAS
    boosted = []
    for candidate in candidates:
        if candidate.doc_id in active:
            candidate.score *= factor
            candidate.boosts.append(f"active document in this session x{factor:.2f}")
            boosted.append(candidate.uri)
    candidates.sort(key=lambda c: (-c.score, c.uri))
    run.stage("document_bias", started, factor=factor, active_documents=sorted(active), boosted=boosted[:50])


def _memory_hit(candidate: retrievers.Candidate, query: retrievers.Query) -> dict[str, Any]:
    memory = candidate.row
    return {
        "uri": candidate.uri,
        "doc_id": None,
        "chunk_id": str(memory.id),
        "level": "L1",
        "text": memory.content,
        "abstract": f"{memory.category}: {memory.key}",
        "overview": memory.content,
        "content": memory.content,
        "title": memory.key,
        "kind": "memory",
        "origin": "memory",
        "score": round(candidate.score, 4),
        "source": "memory",
        "match_reason": "long-term memory, " + _match_reason(candidate, query),
    }


MESSAGE_OVERVIEW_CHARS = 1000


def _coverage(query: retrievers.Query, texts: list[str]) -> list[float]:
    """The share of the query's stems each text contains, by PostgreSQL's own stemming."""
    if not texts or not query.lexemes:
        return [0.0] * len(texts)
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tsvector_to_array(to_tsvector(%s::regconfig, t))"
            " FROM unnest(%s::text[]) WITH ORDINALITY AS x(t, n) ORDER BY n",
            [retrievers.TEXT_SEARCH_CONFIG, texts],
        )
        wanted = set(query.lexemes)
        return [len(wanted & set(row[0] or [])) / len(wanted) for row in cursor.fetchall()]


def _conversation_hits(run: _Run, *, session, query: retrievers.Query, limit: int) -> list[dict[str, Any]]:
    """Seed 002's cross-session recall, as hits: the owner's other sessions' messages."""
    from sessions_app.selectors import recall_messages

    started = time.perf_counter()
    recalled = recall_messages(
        owner=run.owner,
        query=query.text,
        agent_id=session.agent_id,
        exclude_session_id=str(session.id),
        max_results=limit,
        max_tokens=settings.SEARCH_MAX_TOKENS,
        query_vector=query.vector,
    )
    hits = []
    coverage = _coverage(query, [m["content"] for m in recalled["messages"]])
    for message, share in zip(recalled["messages"], coverage, strict=True):
        similarity = message["similarity"]
        # Scored like document nodes and memories, so that one ranking and one threshold fit them all.
        score = retrievers.blend(dense=similarity, coverage=share)
        how = f"semantic similarity {similarity:.2f}" if similarity is not None else "keyword match"
        how += f", {round(share * len(query.lexemes))}/{len(query.lexemes)} query terms" if query.lexemes else ""
        hits.append(
            {
                "uri": f"viking://session/{message['session_id']}/messages/{message['id']}",
                "doc_id": None,
                "chunk_id": str(message["id"]),
                # A message is its own overview (L1); its abstract says who said it where (L0).
                "level": "L1",
                "text": message["content"][:MESSAGE_OVERVIEW_CHARS],
                "abstract": f'{message["role"]} in "{message["session_title"] or "an earlier session"}"',
                "overview": message["content"][:MESSAGE_OVERVIEW_CHARS],
                "content": message["content"],
                "title": message["session_title"],
                "kind": "message",
                "origin": "conversation",
                "session_id": message["session_id"],
                "created_at": message["created_at"],
                "score": round(score, 4),
                "source": "memory",
                "match_reason": f"earlier conversation ({recalled['source']} recall): {how}",
            }
        )
    run.stage(
        "conversations",
        started,
        source=recalled["source"],
        candidates=[{"uri": h["uri"], "score": h["score"]} for h in hits],
    )
    return hits


def retrieval_search(
    *,
    owner,
    query: str,
    session_id: str,
    target_uri: str | None = None,
    limit: int = 5,
    score_threshold: float | None = None,
    debug: bool = False,
    options: SearchOptions | None = None,
    kind: str = SearchTrace.Kind.SEARCH,
) -> dict[str, Any]:
    """Session-aware search: the follow-up resolved from the session (signal-gated), documents ranked
    with a bias to those the session is using, plus long-term memories and earlier conversations.
    Updates the session's working set with what it returns."""
    from sessions_app.models import Memory
    from sessions_app.selectors import session_get
    from sessions_app.services import working_set_update

    options = options or SearchOptions()
    run = _Run(owner=owner, kind=kind, query=_validated_query(query))
    session = session_get(owner=owner, session_id=session_id)
    _, nodes = _scope(run, target_uri)

    started = time.perf_counter()
    context, context_plan = _rewrite_context(owner=owner, session=session, query=run.query)
    run.stage("session_context", started, **context_plan)
    decision = _rewrite(run, run.query, context, options)
    embedded = _embedded_query(run, decision.query)

    candidates = _retrieve_documents(run, embedded, nodes, limit=limit, options=options)
    active = {str(d) for d in (_as_uuid(a) for a in context_plan["working_set"]["active_documents"]) if d}
    if options.document_bias and active:
        _apply_document_bias(run, candidates, active)
    hits = [_node_hit(c, embedded) for c in _head(candidates, limit)]

    # One document (or a part of one) is a deliberate narrowing; the whole library is not.
    scoped_to_a_document = "/documents/" in run.plan["target_uri"]
    if options.include_memories and not scoped_to_a_document:
        memories = Memory.objects.filter(owner=owner, superseded_by__isnull=True, agent_id=session.agent_id)
        found = retrievers.memory_candidates(memories, embedded, limit=max(limit, 10))
        run.stages += found.stages
        others = [_memory_hit(c, embedded) for c in found.candidates]
        others += _conversation_hits(run, session=session, query=embedded, limit=limit)
        others.sort(key=lambda h: -h["score"])
        # Documents keep at least half the places: memories complement them, they do not crowd them out.
        hits = sorted(hits + others[: max(1, limit // 2)], key=lambda h: -h["score"])
        run.plan["sources"] = ["documents", "memories", "conversations"]
    else:
        run.plan["sources"] = ["documents"]

    hits = _cut_by_threshold(run, hits, score_threshold)[:limit]
    hits = _cut_by_budget(run, hits, options.max_tokens or settings.SEARCH_MAX_TOKENS)
    run.plan.update(
        rewritten_query=decision.query,
        rewrite=decision.as_dict(),
        document_bias=settings.DOCUMENT_BIAS if options.document_bias else 0.0,
        active_documents=sorted(active),
        session_context=context_plan,
    )
    working_set_update(
        session_id=str(session.id),
        resolved_terms=decision.resolved_terms,
        documents=list(dict.fromkeys(h["doc_id"] for h in hits if h["doc_id"])),
        sections=list(dict.fromkeys(h["uri"].rsplit("/", 1)[0] for h in hits if h["kind"] == "chunk")),
    )
    answer = _finish(run, hits=hits, session=session, rewrite=decision, debug=debug)
    answer["query_plan"] = {key: value for key, value in run.plan.items() if key != "session_context"}
    return answer
