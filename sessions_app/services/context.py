"""The context a search inside a session needs: the archive overviews most relevant to the question,
the latest turns and the working set. Embedding the question is a model call, and every model call is
recorded, so this lives with the writes; the selectors it calls only read."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from foundation import ai
from sessions_app import selectors
from sessions_app.models import ChatSession
from sessions_app.services.working_set import WorkingSet, working_set_get


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
    query_embedding: ai.QueryEmbedding | None = None,
    max_archives: int = 3,
    max_messages: int = 20,
) -> SearchContext:
    """The session's archive overviews most relevant to ``query`` (best first, joined into ``summary``),
    its latest live turns, and its working set. A caller that has embedded ``query`` already passes the
    vector, or the embedding still being computed (``query_embedding``, see ``ai.embed_query_later``);
    otherwise it is embedded here. Either way the latest turns and the working set are read while the
    model works, and the vector is waited for only to rank the archives."""
    if query_vector is None and query_embedding is None:
        query_embedding = ai.embed_query_later(query, purpose="session_context", owner_id=session.owner_id)
    try:
        recent = selectors.session_recent_for_search(session=session, max_messages=max_messages)
        working_set = working_set_get(session_id=str(session.id))
    finally:
        if query_embedding is not None:  # waited for whatever happened: the model call is accounted for
            query_vector, query_model, _ms = query_embedding.result()
    summaries = selectors.session_ranked_overviews(
        session=session, query=query, limit=max_archives, query_vector=query_vector, query_model=query_model
    )
    return SearchContext(
        summary=selectors.SUMMARY_SEPARATOR.join(summaries),
        summaries=summaries,
        recent_messages=recent,
        working_set=working_set,
    )
