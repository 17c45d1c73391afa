"""A second labelled set for cross-session recall, whose questions are worded the way people ask about real chats.

``bench/recallset`` paraphrases on purpose: its questions name things by their category ("the cat she adopted")
where the turns use specifics ("a tiny tabby kitten"), so a lexical ranker scores poorly there and tuning on it
alone would favour meaning over words. In real long conversations a question shares many of the words of the turns
that answer it ("When did Nadia go to the pottery taster workshop?" for "I've booked a pottery taster workshop for
next Sunday"), with some light paraphrase. This set is written that way, and ``bench/recall_eval.py`` reports the
two side by side.

Six conversations between two people who know each other (university friends, a sister and brother, former
neighbours, a grandmother and grandson, a couple living apart, friends of thirty years), 17-18 dated sessions each
over five to eight months, 18-29 turns a session, 2,367 turns in all. Each speaker has a life story told in news,
follow-up questions and small talk: jobs, family, pets, health, trips, purchases, events, plans and feelings, with
dates said the way people say them ("on Thursday", "last Saturday", "the 14th"), facts that change over time (a
move, a new job) and distractors (both speakers have trips, injuries, purchases and family news with different
specifics). 589 questions, each about a named speaker: single 205 (35%), multi_hop 120 (20%), temporal 120 (20%),
open 68 (12%), absent 76 (13%), with absent ones that name the right person with the wrong activity or ask one
speaker about the other's fact.

The file format is recallset's (see ``bench/recallset/__init__.py``): one JSON file per conversation in ``data/``
with ``id``, ``speakers``, ``relation``, ``sessions`` (``index``, ``date``, alternating ``turns`` of ``{speaker,
text}``) and ``questions`` (``id``, ``kind``, ``question``, ``evidence`` as ``[session_index, turn_index]`` pairs,
``answer``). Evidence lists every turn needed, a question and the short reply that completes it included; a
temporal answer is worked out from the session's date and what was said.

How much questions share with their evidence (``corpus.overlap_summary``: the share of a question's content words,
names left out, that appear in its evidence turns), over answerable questions:

=============  ============  ====================  =====================
set            mean overlap  share sharing a word  share sharing half+
=============  ============  ====================  =====================
dialogset      0.41          67%                   49%
recallset      0.11          32%                   9%
=============  ============  ====================  =====================

    from bench.dialogset import corpus
    corpus.conversations()   # 6 conversations with their sessions
    corpus.questions()       # every question, with its conversation's id
    corpus.check()           # [] when every label is consistent

``python bench/dialogset/check.py`` validates the set and prints its counts, the overlap of both sets by kind and a
fingerprint.
"""
