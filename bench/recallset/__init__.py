"""A labelled set for cross-session recall: two people chatting over months, and questions about what they said.

Built for ``bench/recall_eval.py``, in the manner of the public long-conversation memory benchmarks: one file per
conversation in ``data/``, plain JSON, so a score measured today can be compared with one measured next month and
every label can be read without running anything.

A conversation file holds:

- ``id``, ``speakers`` (two first names) and ``relation`` (friends, siblings, a couple, ...);
- ``sessions``: in the order they happened, each ``{"index", "date", "turns"}``: ``date`` is an ISO time (no zone,
  read as UTC) and ``turns`` alternate between the speakers as ``{"speaker", "text"}``;
- ``questions``: ``{"id", "kind", "question", "evidence", "answer"}``. ``evidence`` lists the turns that hold the
  answer as ``[session_index, turn_index]`` pairs (both from 0). When a fact is split between a question and a
  short reply ("did you get the puppy?" / "Yes, on Friday!"), both turns are evidence.

Kinds: ``single`` (one fact, usually one or two adjacent turns), ``multi_hop`` (turns from two or more places,
often different sessions), ``temporal`` (the answer is a date or an order of events, worked out from the
session's date and what was said: "last Tuesday", "in three weeks"), ``open`` (inference: "would she enjoy a
cruise?", evidence is what supports the answer) and ``absent`` (never said; evidence is empty, and a retriever
should find nothing close).

Questions paraphrase: they name a thing by its category ("the cat she adopted", "her line manager") where the
turns use specifics and chat wording ("a tiny tabby kitten", "is Yvonne still your manager?"). Facts change over
time (a move, a new job), and the two speakers are given similar facts with different specifics (both travel,
both have a hobby, both buy something), as distractors.

    from bench.recallset import corpus
    corpus.conversations()   # 8 conversations with their sessions
    corpus.questions()       # every question, with its conversation's id
    corpus.check()           # [] when every label is consistent

``python bench/recallset/check.py`` validates the set and prints its counts and a fingerprint.
"""
