"""A labelled set for long-term memory extraction: what people write about themselves, and what should be kept.

Built for ``bench/memory_eval.py``. Each statement is one user message as people type it (greetings, typos,
lower case, several facts at once), and is labelled with the memories a careful reader would keep from it, or
with none. Plain JSON lines in ``data/``, one statement a line, so every label can be read without running
anything and a score measured today can be compared with one measured later:

- ``data/tuning.jsonl``: the part the extraction was tuned on (its misses and false positives were read);
- ``data/heldout.jsonl``: written at the same time, by the same rules, and never looked at while tuning. Its
  score is the honest one.

A statement is ``{"id", "text", "expect": [memory, ...]}``, plus ``"negative": kind`` when nothing should be
kept (``expect`` is then empty). An expected memory is ``{"kind", "category", "key", "content"}``:

- ``kind``: what sort of fact it is (``KINDS``): ``identity`` (name, age, nationality, languages), ``health``
  (conditions, medication, injuries, allergies and intolerances), ``diet``, ``family`` (partner, children, parents,
  siblings, pets, and a family member's own facts), ``work`` (job, employer, team, schedule), ``places`` (lives in,
  moved to, from), ``dates`` (birthdays, anniversaries, dated events), ``plans``, ``preferences``, ``habits`` and
  ``requests`` (an explicit "remember that ...", which must always be kept);
- ``category``: the memory category it belongs in; ``a|b`` accepts either (an explicit request's category
  depends on what it asks to keep);
- ``key``: words that must all occur in the memory's key (``a|b`` inside a word accepts either); empty for any
  key. Keys are stable per subject: ``location``, ``diet``, ``partner``, or the subject itself ("peanut");
- ``content``: words that must all occur in the memory's text, case aside (``allerg peanut``).

Negative kinds (``NEGATIVES``): ``question``, ``joke`` (hyperbole: "allergic to Mondays"), ``hypothetical``,
``other_person`` (a colleague's or a stranger's fact), ``reported`` (what someone else said), ``negated`` and
``chitchat`` (pleasantries, passing states).

    from bench.memoryset import corpus
    corpus.statements("tuning")     # the tuning part
    corpus.statements("heldout")    # the held-out part
    corpus.check()                  # [] when every label is consistent

``python bench/memoryset/check.py`` validates the set and prints its counts and a fingerprint.
"""
