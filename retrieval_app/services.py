"""find() and search(): what they run, in order, and what they record.

``retrieval_find`` ranks the owner's document nodes under a URI. ``retrieval_search`` does the same
inside a session: it resolves a follow-up against the session (only when the question needs it), biases
the ranking towards the documents the session is using, adds long-term memories and earlier
conversations, and updates the session's working set with what it returned. Both record a trace.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from django.conf import settings
from django.db import connection
from django.db.models import QuerySet

from documents_app.selectors import node_scope, titles_in_use
from documents_app.uris import doc_id_of, names_a_document
from foundation import ai
from foundation.accounting import calls_for_session, calls_recorded_together
from foundation.ai.extractive import split_sentences
from foundation.db import Beside, read_beside, release_database_connections
from foundation.exceptions import InvalidInputError
from foundation.text import TEXT_SEARCH_CONFIG, query_lexemes, texts_lexemes
from foundation.tracing import ms_since
from retrieval_app import fusion, retrievers, rewriting
from retrieval_app.exceptions import QueryTooLong
from retrieval_app.hits import Hit, memory_hit, message_hit, node_hit
from retrieval_app.models import SearchTrace
from retrieval_app.recall import recall_messages
from retrieval_app.traces import Run, search_trace_dict, search_trace_record
from sessions_app.models import ChatSession, Memory
from sessions_app.selectors import memory_source_message_ids, session_summary_text
from sessions_app.services import SearchContext, session_search_context, working_set_update

logger = logging.getLogger(__name__)

MODES = ("hierarchical", "flat")
FUSIONS = ("blend", "rrf")
RETRIEVERS = ("dense", "keyword")
# An earlier question this close to the current one only repeats it: it is not an answer.
REPEAT_SIMILARITY = 0.92
# A question is read with this many of its session's archives, the most relevant.
SESSION_CONTEXT_ARCHIVES = 3
# The fewest memories scored beside the documents, however few places a search asks for.
MEMORY_CANDIDATES_MIN = 10
# A passage scoring this much holds its place against memories and earlier conversations. On the labelled
# library (bench/evalset) 99% of the relevant passages found score above 0.29, and the best passages for
# questions the library cannot answer ("what should I avoid eating?", "who won the 1998 world cup?")
# score 0.07 to 0.24.
DOCUMENT_PLACE_MIN_SCORE = 0.25


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
class SearchResult:
    """What a search found, and its stored trace. ``query`` is what was searched for (the rewritten
    follow-up, when it was rewritten)."""

    hits: list[Hit]
    trace: SearchTrace
    query: str
    query_plan: dict[str, Any] = field(default_factory=dict)

    def trace_dict(self) -> dict[str, Any]:
        return search_trace_dict(self.trace)


def _validated_query(query: str) -> str:
    if not isinstance(query, str) or not query.strip():
        raise InvalidInputError("query must not be empty.")
    if len(query) > settings.QUERY_MAX_CHARS:
        raise QueryTooLong(details={"max_chars": settings.QUERY_MAX_CHARS, "chars": len(query)})
    return query.strip()


def _embedding_started(run: Run, text: str) -> tuple[ai.QueryEmbedding, float]:
    """The question's embedding started in a thread of its own, and when."""
    return ai.embed_query_later(text, purpose=f"{run.kind}_query", owner_id=run.owner.id), time.perf_counter()


# What a search can find from the question's stems alone while its vector is computed (``_keyword_first``).
Meanwhile = Callable[[tuple[str, ...]], "retrievers.KeywordFound"]


def _embedded_query(
    run: Run,
    text: str,
    *,
    with_terms: bool = True,
    terms_also_of: str | None = None,
    started: tuple[ai.QueryEmbedding, float] | None = None,
    meanwhile: Meanwhile | None = None,
) -> tuple[retrievers.Query, tuple[str, ...], retrievers.KeywordFound | None]:
    """The question with its vector and stems, the model working in a thread of its own while the stems
    are looked up; the stems of ``terms_also_of`` (another text), looked up in the same statement; and
    what ``meanwhile`` found from the question's stems while the model was still working.
    ``started``: the embedding already begun (``_embedding_started``) while other work was done."""
    embedding, started_at = started or _embedding_started(run, text)
    found_first = None
    try:
        texts = ([text] if with_terms else []) + ([terms_also_of] if terms_also_of is not None else [])
        found = texts_lexemes(*texts) if texts else []
        lexemes = found.pop(0) if with_terms else ()
        other = found.pop(0) if terms_also_of is not None else ()
        if meanwhile is not None and lexemes:
            found_first = meanwhile(lexemes)
    finally:
        vector, model, _ms = embedding.result()  # the model call is accounted for, whatever happened
    if embedding.error:
        # Keyword search still answers; the trace says why the dense side is missing.
        run.plan["dense_unavailable"] = embedding.error[:300]
    run.stage("query", started_at, embedded=vector is not None, model=model, terms=list(lexemes))
    return retrievers.Query(text=text, vector=vector, model=model, lexemes=lexemes), other, found_first


def _checked_mode(options: SearchOptions) -> str:
    mode = options.mode or settings.RETRIEVAL_MODE
    if mode not in MODES or options.fusion not in FUSIONS or not set(options.retrievers) <= set(RETRIEVERS):
        raise InvalidInputError("Unknown retrieval mode, fusion or retriever.")
    return mode


def _descends(mode: str, options: SearchOptions) -> bool:
    return mode == "hierarchical" and tuple(options.retrievers) == RETRIEVERS


def _keyword_first(nodes: QuerySet, *, limit: int, options: SearchOptions) -> Meanwhile | None:
    """The keyword side of the documents' search, to run while the question's vector is computed: it needs
    only the question's stems, and the model takes as long as the keyword searches."""
    mode = _checked_mode(options)
    if "keyword" not in options.retrievers:
        return None
    descends = _descends(mode, options)

    def find(lexemes: tuple[str, ...]) -> retrievers.KeywordFound:
        stems_only = retrievers.Query(text="", vector=None, model="", lexemes=lexemes)
        return retrievers.keyword_found(nodes, stems_only, limit=limit, descends=descends)

    return find


def _scope(run: Run, target_uri: str | None) -> QuerySet:
    scope_uri, nodes = node_scope(owner=run.owner, uri=target_uri)
    run.plan["target_uri"] = scope_uri
    return nodes


def _retrieve_documents(
    run: Run,
    query: retrievers.Query,
    nodes: QuerySet,
    *,
    limit: int,
    options: SearchOptions,
    favoured: frozenset[str] = frozenset(),
    found: retrievers.KeywordFound | None = None,
) -> list[retrievers.Candidate]:
    """The document candidates, best first; ``favoured`` documents get the document bias afterwards.
    ``found``: the keyword side, when it was found while the question was embedded."""
    mode = _checked_mode(options)
    run.plan.update(mode=mode, fusion=options.fusion, retrievers=list(options.retrievers))
    query = retrievers.weighted(query, nodes.filter(kind="chunk"))
    if query.weights:
        run.plan["term_weights"] = {lexeme: round(weight, 3) for lexeme, weight in query.weights.items()}
    pool = max(limit, settings.RETRIEVAL_CANDIDATES)
    if _descends(mode, options):
        # Descent stops once the results asked for are settled; the rest of the pool is a by-product.
        retrieval = retrievers.hierarchical_candidates(
            nodes, query, limit=limit, favoured=favoured, factor=1 + settings.DOCUMENT_BIAS, found=found
        )
        run.plan["directories_visited"] = retrieval.visited
    else:
        retrieval = retrievers.chunk_candidates(
            nodes, query, limit=pool, fusion=options.fusion, retrievers=tuple(options.retrievers), found=found
        )
    run.stages += retrieval.stages
    return retrieval.candidates


def _document_hits(candidates: list[retrievers.Candidate], query: retrievers.Query, limit: int) -> list[Hit]:
    """Enough of the final ranking to fill the results after thresholds, with their tiers loaded."""
    return [node_hit(c, query) for c in retrievers.with_text(candidates[: retrievers.candidates_shown(limit)])]


def _cut_by_threshold(run: Run, hits: list[Hit], threshold: float | None) -> list[Hit]:
    if threshold is None:
        return hits
    kept = [hit for hit in hits if hit.score >= threshold]
    cut = [hit.brief() for hit in hits if hit.score < threshold]
    run.stages.append({"stage": "score_threshold", "threshold": threshold, "cut": cut[:50], "ms": 0.0})
    return kept


def _cut_by_budget(run: Run, hits: list[Hit], max_tokens: int) -> list[Hit]:
    """Whole hits while their text fits the token budget; the trace lists what did not."""
    kept, used, cut = [], 0, []
    for hit in hits:
        tokens = ai.estimate_tokens(hit.text)
        if used + tokens > max_tokens and kept:
            cut.append({"uri": hit.uri, "tokens": tokens})
            continue
        kept.append(hit)
        used += tokens
    run.stages.append({"stage": "token_budget", "max_tokens": max_tokens, "used": used, "cut": cut, "ms": 0.0})
    return kept


def retrieval_find(
    *,
    owner,
    query: str,
    target_uri: str | None = None,
    limit: int = 5,
    score_threshold: float | None = None,
    options: SearchOptions | None = None,
) -> SearchResult:
    """Documents only, no session: the best nodes under ``target_uri`` (the user root when empty)."""
    options = options or SearchOptions()
    run = Run(owner=owner, kind=SearchTrace.Kind.FIND, query=_validated_query(query))
    nodes = _scope(run, target_uri)
    keyword_first = _keyword_first(nodes, limit=limit, options=options)
    embedded, _, found = _embedded_query(run, run.query, meanwhile=keyword_first)
    candidates = _retrieve_documents(run, embedded, nodes, limit=limit, options=options, found=found)
    hits = _document_hits(candidates, embedded, limit)
    hits = _cut_by_threshold(run, hits, score_threshold)[:limit]
    hits = _cut_by_budget(run, hits, options.max_tokens or settings.SEARCH_MAX_TOKENS)
    return SearchResult(hits=hits, trace=search_trace_record(run=run, hits=hits), query=run.query)


def _rewrite_context(*, owner, context: SearchContext, query: str) -> tuple[rewriting.RewriteContext, dict]:
    """The session as the rewriter needs it: summary, recent turns, working set, titles in use."""
    working_set = context.working_set
    titles, section_titles = titles_in_use(
        owner=owner, doc_ids=working_set.active_documents, section_uris=working_set.active_sections
    )
    recent = context.recent_messages
    if recent and recent[-1]["role"] == "user" and recent[-1]["content"].strip() == query.strip():
        recent = recent[:-1]  # a chat turn records its message first; it is not its own antecedent
    rewrite_context = rewriting.RewriteContext(
        recent_turns=[(m["role"], m["content"]) for m in recent],
        summary=session_summary_text(context.as_dict()),
        resolved_terms=working_set.resolved_terms,
        active_documents=[(d, titles[d]) for d in map(doc_id_of, working_set.active_documents) if d in titles],
        active_sections=[(uri, section_titles[uri]) for uri in working_set.active_sections if uri in section_titles],
    )
    return rewrite_context, {
        "summary_chars": len(rewrite_context.summary),
        "archive_summaries": len(context.summaries),
        "recent_messages": len(recent),
        "working_set": working_set.as_dict(),
    }


def _rewrite(run: Run, query: str, context: rewriting.RewriteContext, options: SearchOptions) -> rewriting.Rewrite:
    started = time.perf_counter()
    enabled = settings.ENABLE_QUERY_REWRITING if options.rewrite is None else options.rewrite
    decision = rewriting.decide(query, context, enabled=enabled)
    if decision.signals and not context.empty and enabled:
        engine = ai.text_engine()
        try:
            if engine.generates:
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


def _apply_document_bias(run: Run, candidates: list[retrievers.Candidate], active: set[str]) -> None:
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


def _coverage(query: retrievers.Query, texts: list[str]) -> list[float]:
    """The share of the query's stems each text contains, by PostgreSQL's own stemming."""
    if not texts or not query.lexemes:
        return [0.0] * len(texts)
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tsvector_to_array(to_tsvector(%s::regconfig, t))"
            " FROM unnest(%s::text[]) WITH ORDINALITY AS x(t, n) ORDER BY n",
            [TEXT_SEARCH_CONFIG, texts],
        )
        wanted = set(query.lexemes)
        return [len(wanted & set(row[0] or [])) / len(wanted) for row in cursor.fetchall()]


def _normalised(text: str) -> str:
    return " ".join(re.findall(r"\w+", text.lower()))


def _told(text: str) -> str | None:
    """What a turn tells (its sentences that are not questions): "" for a turn that only asks, None for
    one that asks nothing."""
    sentences = split_sentences(text)
    told = [sentence for sentence in sentences if not sentence.rstrip().endswith("?")]
    return " ".join(told) if len(told) < len(sentences) else None


def _echoes(
    message: dict[str, Any],
    *,
    query: retrievers.Query,
    document_uris: set[str],
    memory_sources: set[int],
    asks_only: bool,
) -> str:
    """Why an earlier message would only echo something, or "": the user asking the same question
    again, a question of theirs (``asks_only``: a question is not a source for its own answer, nor is a
    turn that holds the question's words only in what it asks, "I just bought it. How should the lid
    hinge be cleaned?"), an answer that quoted a passage this search found itself (the source wins), or
    a turn a memory this search found was drawn from (the memory says it, and links to the turn)."""
    if message["role"] == "user" and (
        _normalised(message["content"]) == _normalised(query.text) or (message["similarity"] or 0) >= REPEAT_SIMILARITY
    ):
        return "repeats the question"
    if message["role"] == "user" and asks_only:
        return "asks rather than tells"
    quoted = set((message.get("metadata") or {}).get("context_uris") or [])
    if quoted & document_uris:
        return "quotes a passage found directly"
    if message["id"] in memory_sources:
        return "is what a memory found directly was drawn from"
    return ""


def _conversations_recalled(*, owner, session: ChatSession, query: retrievers.Query, limit: int) -> dict[str, Any]:
    """The owner's other sessions' messages relevant to the query (``recall_messages``), as a search reads
    them: with its question's vector and stems, leaving new turns to the workers to embed."""
    return recall_messages(
        owner=owner,
        query=query.text,
        agent_id=session.agent_id,
        exclude_session_id=str(session.id),
        max_results=limit,
        max_tokens=settings.SEARCH_MAX_TOKENS,
        query_vector=query.vector,
        query_model=query.model,
        query_stems=query.lexemes,
        embed_pending=False,  # a turn's time is the person's: the workers embed what was just written
    )


def _conversation_hits(
    run: Run,
    *,
    recalling: Beside[dict[str, Any]],
    query: retrievers.Query,
    document_uris: set[str],
    memory_ids: Sequence[int] = (),
) -> list[Hit]:
    """The earlier conversations ``recalling`` found, as hits, without echoes (``memory_ids``: the memories
    found beside them, whose source turns they would repeat)."""
    recalled = recalling.result()
    started = time.perf_counter()
    memory_sources = memory_source_message_ids(memory_ids=memory_ids)
    recalled_messages = recalled["messages"]
    # The person's turns that ask are judged by what they tell as well: one round trip.
    told = {m["id"]: _told(m["content"]) for m in recalled_messages if m["role"] == "user"}
    mixed = {message_id: text for message_id, text in told.items() if text}
    shares = _coverage(query, [m["content"] for m in recalled_messages] + list(mixed.values()))
    told_shares = dict(zip(mixed, shares[len(recalled_messages) :], strict=True))
    hits, echoes, kept = [], [], []
    for message, share in zip(recalled_messages, shares, strict=False):
        message_id = message["id"]
        asks_only = told.get(message_id) == "" or (share > 0 and told_shares.get(message_id, share) == 0)
        why = _echoes(
            message, query=query, document_uris=document_uris, memory_sources=memory_sources, asks_only=asks_only
        )
        if why:
            echoes.append({"id": message["id"], "why": why})
        else:
            kept.append((message, share))
    for message, share in kept:
        similarity = message["similarity"]
        how = f"semantic similarity {similarity:.2f}" if similarity is not None else "keyword match"
        how += f", {round(share * len(query.lexemes))}/{len(query.lexemes)} query terms" if query.lexemes else ""
        # Scored like document nodes and memories, so that one ranking and one threshold fit them all.
        score = fusion.blend(dense=similarity, coverage=share)
        hits.append(message_hit(message, score=score, how=how, recall_source=recalled["source"]))
    # The recall's own time (beside the documents or not), then what followed it here.
    beside = {"beside_documents": True, "waited_ms": recalling.waited_ms} if recalling.ran_beside else {}
    run.stages.append(
        {
            "stage": "conversations",
            "ms": round(recalling.ms + ms_since(started), 2),
            "source": recalled["source"],
            "candidates": [h.brief() for h in hits],
            "echoes": echoes,
            **beside,
        }
    )
    return hits


def retrieval_search(
    *,
    owner,
    query: str,
    session: ChatSession,
    target_uri: str | None = None,
    limit: int = 5,
    score_threshold: float | None = None,
    options: SearchOptions | None = None,
    kind: str = SearchTrace.Kind.SEARCH,
    save_trace: bool = True,
    doc_ids: Sequence[str] = (),
) -> SearchResult:
    """Session-aware search: the follow-up resolved from the session (signal-gated), documents ranked
    with a bias to those the session is using, plus long-term memories and earlier conversations.
    Updates the session's working set with what it returns. With ``save_trace=False`` the trace is
    returned unsaved, for a caller that adds its own stages before saving it (the chat). ``doc_ids``
    narrows the documents to these (already checked to be the owner's), as a chosen set. The model
    calls it makes (embedding, rewriting) are the session's."""
    with calls_for_session(session.pk), calls_recorded_together():
        return _session_search(
            owner=owner,
            query=query,
            session=session,
            target_uri=target_uri,
            limit=limit,
            score_threshold=score_threshold,
            options=options or SearchOptions(),
            kind=kind,
            save_trace=save_trace,
            doc_ids=doc_ids,
        )


def _session_search(
    *,
    owner,
    query: str,
    session: ChatSession,
    target_uri: str | None,
    limit: int,
    score_threshold: float | None,
    options: SearchOptions,
    kind: str,
    save_trace: bool,
    doc_ids: Sequence[str],
) -> SearchResult:
    run = Run(owner=owner, kind=kind, query=_validated_query(query))
    nodes = _scope(run, target_uri)
    if doc_ids:
        nodes = nodes.filter(document_id__in=list(doc_ids))
        run.plan["document_ids"] = sorted(doc_ids)
    asked = _asked_in_session(run, session, options, keyword_first=_keyword_first(nodes, limit=limit, options=options))
    # One document (or a part of one, or a chosen set) is a deliberate narrowing; the whole library is not.
    other_sources = options.include_memories and not doc_ids and not names_a_document(run.plan["target_uri"])
    # Earlier conversations need nothing the documents' ranking finds until their echoes are judged.
    recalling = (
        read_beside(_conversations_recalled, owner=owner, session=session, query=asked.query, limit=limit)
        if other_sources
        else None
    )

    active = {doc_id for doc_id, _ in asked.context.active_documents}
    hits = _documents_in_session(run, asked, nodes, active=active, limit=limit, options=options)
    if recalling is not None:
        hits = _with_other_sources(
            run, hits, session=session, query=asked.query, as_asked=asked.as_asked, recalling=recalling, limit=limit
        )
        run.plan["sources"] = ["documents", "memories", "conversations"]
    else:
        run.plan["sources"] = ["documents"]

    hits = _cut_by_threshold(run, hits, score_threshold)[:limit]
    hits = _cut_by_budget(run, hits, options.max_tokens or settings.SEARCH_MAX_TOKENS)
    run.plan.update(
        rewritten_query=asked.decision.query,
        rewrite=asked.decision.as_dict(),
        document_bias=settings.DOCUMENT_BIAS if options.document_bias else 0.0,
        active_documents=sorted(active),
        session_context=asked.context_plan,
    )
    working_set_update(
        session_id=str(session.id),
        resolved_terms=asked.decision.resolved_terms,
        documents=list(dict.fromkeys(h.doc_id for h in hits if h.doc_id)),
        sections=list(dict.fromkeys(h.uri.rsplit("/", 1)[0] for h in hits if h.kind == "chunk")),
    )
    trace = search_trace_record(run=run, hits=hits, session=session, rewrite=asked.decision, save=save_trace)
    query_plan = {key: value for key, value in run.plan.items() if key != "session_context"}
    return SearchResult(hits=hits, trace=trace, query=asked.decision.query, query_plan=query_plan)


def _documents_in_session(
    run: Run, asked: _Asked, nodes: QuerySet, *, active: set[str], limit: int, options: SearchOptions
) -> list[Hit]:
    """The documents' hits for a question asked in a session, those it is working on (``active``) favoured."""
    favoured = frozenset(active) if options.document_bias else frozenset()
    candidates = _retrieve_documents(
        run, asked.query, nodes, limit=limit, options=options, favoured=favoured, found=asked.found
    )
    if favoured:
        _apply_document_bias(run, candidates, active)
    return _document_hits(candidates, asked.query, limit)


@dataclass(frozen=True)
class _Asked:
    """A question read in its session: the query to search (rewritten when it was a follow-up), the session
    as the rewriter saw it (and what of it was read), and the rewrite decided."""

    query: retrievers.Query
    context: rewriting.RewriteContext
    context_plan: dict[str, Any]
    decision: rewriting.Rewrite
    # The question as the person put it, embedded: the same as ``query`` unless it was rewritten.
    as_asked: retrievers.Query
    # The keyword side of the documents' search, when it was found while the rewritten query was embedded.
    found: retrievers.KeywordFound | None = None


def _asked_in_session(
    run: Run, session: ChatSession, options: SearchOptions, *, keyword_first: Meanwhile | None = None
) -> _Asked:
    """Reads the session around the question and resolves the question against it. ``keyword_first``:
    what to search from the query's stems while its vector is computed."""
    # The question as asked ranks the session's archives; a standalone question is searched as is,
    # so its one embedding serves both. While the model works, the documents' keyword side of a
    # question without a follow-up's signals is found from its stems (it will be searched as asked),
    # then the session's latest turns are read.
    embedding = _embedding_started(run, run.query)
    searched_as_asked = keyword_first is not None and not rewriting.detect_signals(run.query)
    lexemes = query_lexemes(run.query) if searched_as_asked else None
    found_as_asked = keyword_first(lexemes) if searched_as_asked and lexemes else None
    started = time.perf_counter()
    session_context = session_search_context(
        session=session,
        query=run.query,
        max_archives=SESSION_CONTEXT_ARCHIVES,
        max_messages=settings.HISTORY_MAX_TURNS,
        query_embedding=embedding[0],
    )
    asked, _, _ = _embedded_query(run, run.query, with_terms=False, started=embedding)
    context, context_plan = _rewrite_context(owner=run.owner, context=session_context, query=run.query)
    run.stage("session_context", started, **context_plan)
    decision = _rewrite(run, run.query, context, options)
    found = None
    if decision.query == run.query:
        embedded = as_asked = replace(asked, lexemes=query_lexemes(asked.text) if lexemes is None else lexemes)
        found = found_as_asked
    else:
        embedded, asked_lexemes, found = _embedded_query(
            run, decision.query, terms_also_of=asked.text, meanwhile=keyword_first
        )
        as_asked = replace(asked, lexemes=asked_lexemes)
    return _Asked(
        query=embedded, context=context, context_plan=context_plan, decision=decision, as_asked=as_asked, found=found
    )


def _with_other_sources(
    run: Run,
    hits: list[Hit],
    *,
    session: ChatSession,
    query: retrievers.Query,
    as_asked: retrievers.Query,
    recalling: Beside[dict[str, Any]],
    limit: int,
) -> list[Hit]:
    """``hits`` with the long-term memories and the earlier conversations (``recalling``) that answer the
    query, best first. Memories are also looked for with the question as it was asked (``as_asked``),
    when it was rewritten."""
    memories = Memory.objects.filter(owner=run.owner, superseded_by__isnull=True, agent_id=session.agent_id)
    found = retrievers.memory_candidates(memories, query, limit=max(limit, MEMORY_CANDIDATES_MIN), as_asked=as_asked)
    run.stages += found.stages
    others = [memory_hit(c, query) for c in found.candidates]
    document_uris = {hit.uri for hit in hits}
    memory_ids = [candidate.row.id for candidate in found.candidates]
    others += _conversation_hits(
        run, recalling=recalling, query=query, document_uris=document_uris, memory_ids=memory_ids
    )
    others.sort(key=lambda h: -h.score)
    # Documents keep at least half the places: memories complement them, they do not crowd them out; but
    # a question about the person is answered by what is remembered of them, and a place is kept only for
    # a passage worth reading (a kettle's manual holds none for "what should I avoid eating?").
    worth_reading = min(limit, sum(1 for hit in hits if hit.score >= DOCUMENT_PLACE_MIN_SCORE))
    places = limit if rewriting.asks_about_owner(query.text) else max(1, limit // 2, limit - worth_reading)
    return sorted(hits + others[:places], key=lambda h: -h.score)
