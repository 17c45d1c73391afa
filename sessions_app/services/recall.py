"""Reads that need the query embedded first. Embedding is a model call, and every model call is
recorded, so these live with the writes; the selectors they call only read."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings

from retrieval_app.core import ai
from retrieval_app.core.tracing import RESULT_TEXT_CHARS, ms_since, timings_of
from retrieval_app.models import SearchTrace
from sessions_app import selectors
from sessions_app.models import ChatSession
from sessions_app.services.working_set import WorkingSet, working_set_get
from sessions_app.uris import message_uri

logger = logging.getLogger(__name__)


def _embedded(query: str, *, purpose: str, owner_id: int) -> tuple[list[float] | None, str]:
    """The query's vector, or None when the embedding model fails (the keyword side still answers)."""
    if not query.strip():
        return None, ai.active_embedding_model()
    try:
        return ai.embed_query(query, purpose=purpose, owner_id=owner_id)
    except ai.EmbeddingError:
        logger.warning("%s: embedding the query failed; ranking by keywords", purpose)
        return None, ai.active_embedding_model()


def memory_recall(*, owner, query: str, **filters: Any) -> dict[str, Any]:
    """The owner's earlier messages relevant to ``query``: by meaning, else by words. ``filters`` are
    those of ``selectors.recall_messages`` (agent, excluded session, result and token limits, threshold).
    Each recall leaves a trace (kind ``recall``) with its timings, for operators."""
    started = time.perf_counter()
    vector, model = _embedded(query, purpose="recall", owner_id=owner.id)
    stages: list[dict[str, Any]] = [
        {"stage": "query", "ms": ms_since(started), "embedded": vector is not None, "model": model}
    ]
    found = selectors.recall_messages(
        owner=owner, query=query, query_vector=vector, query_model=model, stages=stages, **filters
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


@dataclass
class SearchContext:
    """Everything a search needs to know of the session it runs in, asked for once."""

    summary: str
    summaries: list[str]
    recent_messages: list[dict[str, Any]]
    working_set: WorkingSet = field(default_factory=WorkingSet)

    def as_dict(self) -> dict[str, Any]:
        """The session context as the API gives it: ``{summary, summaries, recent_messages}``."""
        return {"summary": self.summary, "summaries": self.summaries, "recent_messages": self.recent_messages}


def session_search_context(
    *,
    session: ChatSession,
    query: str = "",
    query_vector: Sequence[float] | None = None,
    query_model: str = "",
    **limits: int,
) -> SearchContext:
    """The session's archive overviews most relevant to ``query`` (best first, joined into ``summary``),
    its latest live turns, and its working set; ``limits`` are ``max_archives`` and ``max_messages``.
    A caller that has embedded ``query`` already passes the vector; otherwise it is embedded here."""
    if query_vector is None:
        query_vector, query_model = _embedded(query, purpose="session_context", owner_id=session.owner_id)
    context = selectors.session_context_for_search(
        session=session, query=query, query_vector=query_vector, query_model=query_model, **limits
    )
    return SearchContext(**context, working_set=working_set_get(session_id=str(session.id)))
