"""Search: find() over documents, and search() inside a session, over documents, memories and
earlier conversations.

- ``service``: what a find or search runs, in order (the entry points);
- ``retrievers``: dense and keyword candidates from PostgreSQL, fused, flat or by hierarchical descent;
- ``recall``: earlier conversations' turns relevant to a question, for recall and search;
- ``fusion``: how separate signals become one ranking;
- ``rewriting``: the follow-up detector and resolvers;
- ``hits`` and ``serializers``: the typed result and its wire format;
- ``traces``: the stored record of every search.
"""

from retrieval_app.search.hits import Hit
from retrieval_app.search.recall import memory_recall, recall_messages
from retrieval_app.search.service import SearchOptions, SearchResult, retrieval_find, retrieval_search

__all__ = [
    "Hit",
    "SearchOptions",
    "SearchResult",
    "memory_recall",
    "recall_messages",
    "retrieval_find",
    "retrieval_search",
]
