"""What a search returns: one ``Hit`` per result, whatever found it (a document node, a long-term
memory, a turn of an earlier conversation), so that ranking, thresholds, budgets and the chat prompt
treat them alike. ``serializers`` turns them into the wire format."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from foundation.ai.memories import implication, label
from retrieval_app import retrievers
from sessions_app.uris import message_uri

MESSAGE_OVERVIEW_CHARS = 1000


@dataclass
class Hit:
    """One result. ``text`` is the best cheap tier (L1, else L0, else the match reason) and ``level``
    says which; ``content`` is the full text (L2)."""

    uri: str
    doc_id: str | None
    chunk_id: str | None
    level: str
    text: str
    abstract: str
    overview: str
    content: str
    title: str
    kind: str  # chunk, section, document, memory or message
    origin: str  # document, memory or conversation
    score: float
    source: str  # semantic, keyword, hybrid or memory
    match_reason: str
    session_id: str | None = None  # conversation hits: the session and time of the turn
    created_at: str | None = None
    # The title of the document a passage is part of ("" for memories and conversations).
    document_title: str = ""
    # The hit's own cosine similarity to the query (None without a vector), apart from ``score``, which
    # blends it with shared words and, in a descent, with its parents' scores: the chat judges relevance by both.
    similarity: float | None = None
    # What the hit means beyond its own words, judged with it but never quoted: for a memory, what its fact
    # means for the person ("A food to avoid eating." for a peanut allergy).
    implies: str = ""
    # A memory returned because the question asks what is known about the person (rewriting.asks_about_owner).
    about_owner: bool = False
    # A memory returned because the question asks for what it means for the person (a food to avoid eating).
    asked_for: bool = False

    def brief(self) -> dict[str, Any]:
        return {"uri": self.uri, "score": self.score}


def match_reason(candidate: retrievers.Candidate, query: retrievers.Query) -> str:
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


def node_hit(candidate: retrievers.Candidate, query: retrievers.Query) -> Hit:
    node = candidate.row
    reason = match_reason(candidate, query)
    if node.overview:
        text, level = node.overview, "L1"
    elif node.abstract:
        text, level = node.abstract, "L0"
    else:
        text, level = reason, "match_reason"
    return Hit(
        uri=node.uri,
        doc_id=str(node.document_id),
        chunk_id=str(node.id),
        level=level,
        text=text,
        abstract=node.abstract,
        overview=node.overview,
        content=node.content,
        title=node.title,
        kind=node.kind,
        origin="document",
        score=round(candidate.score, 4),
        source=candidate.source,
        match_reason=reason,
        similarity=candidate.dense,
        document_title=getattr(node, "document_title", ""),
    )


def memory_hit(candidate: retrievers.Candidate, query: retrievers.Query) -> Hit:
    """A long-term memory, called by its label ("Peanut allergy"), as the Memories page calls it."""
    memory = candidate.row
    called = label(memory.key, memory.content)
    return Hit(
        uri=candidate.uri,
        doc_id=None,
        chunk_id=str(memory.id),
        level="L1",
        text=memory.content,
        abstract=f"{memory.category}: {called}",
        overview=memory.content,
        content=memory.content,
        title=called,
        kind="memory",
        origin="memory",
        score=round(candidate.score, 4),
        source="memory",
        match_reason="long-term memory, " + match_reason(candidate, query),
        similarity=candidate.dense,
        implies=implication(memory.category, memory.key),
        about_owner=retrievers.ABOUT_OWNER_BOOST in candidate.boosts,
        asked_for=retrievers.asked_for_its_meaning(candidate),
    )


def _speaker(message: dict[str, Any]) -> str:
    return str((message.get("metadata") or {}).get("speaker") or message["role"])


def message_hit(message: dict[str, Any], *, score: float, how: str, recall_source: str) -> Hit:
    """A turn of an earlier conversation: it is its own overview (L1); its abstract says who said it
    where (L0)."""
    where = message["session_title"] or "an earlier session"
    return Hit(
        uri=message_uri(message["session_id"], message["id"]),
        doc_id=None,
        chunk_id=str(message["id"]),
        level="L1",
        text=message["content"][:MESSAGE_OVERVIEW_CHARS],
        abstract=f'{_speaker(message)} on {message["created_at"][:10]} in "{where}"',
        overview=message["content"][:MESSAGE_OVERVIEW_CHARS],
        content=message["content"],
        title=message["session_title"],
        kind="message",
        origin="conversation",
        session_id=message["session_id"],
        created_at=message["created_at"],
        score=round(score, 4),
        source="memory",
        match_reason=f"earlier conversation ({recall_source} recall): {how}",
        similarity=message.get("similarity"),
    )
