"""A labelled, deterministic retrieval and follow-up-rewriting evaluation set.

Everything is generated from fact tables in this package, with no network or model calls, so that a score
measured today can be compared with one measured next month: the corpus, the queries and the conversations
are byte-for-byte the same on every run. ``corpus`` is the entry point; ``check`` validates it.
"""
