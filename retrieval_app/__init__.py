"""Search: find() over documents, and search() inside a session, over documents, memories and
earlier conversations.

- ``services``: what a find or search runs, in order (the entry points);
- ``retrievers``: dense and keyword candidates from PostgreSQL, fused, flat or by hierarchical descent;
- ``recall``: earlier conversations' turns relevant to a question, for recall and search;
- ``fusion``: how separate signals become one ranking;
- ``rewriting``: the follow-up detector and resolvers;
- ``hits`` and ``wire``: the typed result and its wire format;
- ``traces``: the stored record of every search.
"""
