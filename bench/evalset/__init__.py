"""A labelled evaluation set for document retrieval and for rewriting follow-up questions.

The set is plain data in ``data/``, so a score measured today can be compared with one measured next month,
and every query can be read and reviewed without running anything:

- ``documents/*.md``: 45 Markdown documents (product manuals, runbooks, HR policies, contracts, recipes,
  travel terms, bank account terms), each a ``#`` title and 4-8 ``##`` sections. Documents of one kind share
  their headings and much of their wording on purpose, so only names and values tell them apart.
- ``documents.json``: one entry per document, in order: ``key`` (how queries refer to it), ``title``,
  ``filename`` (in ``documents/``), ``name`` (the product, service or policy's own name) and ``entities``
  (names a query may share with its answer without that counting as shared wording: the name, how the text
  refers to it, the brand, the bank or the parties).
- ``queries.json``: questions with the sections that answer them. ``relevant`` lists ``{"doc", "section",
  "grade"}``: grade 2 answers the question, grade 1 mentions the topic without answering it. ``kind`` is
  "lexical" (reuses at least two of the answer's content words), "paraphrase" (none, apart from the entity
  names) or "multi" (two grade-2 sections, in one document or in two). ``answer_sentences`` are the sentences,
  copied verbatim from the documents, that answer it.
- ``sessions.json``: one user's earlier chat sessions, in the order they happened. Sessions in the same
  ``cluster`` are about similar things (two databases with ports, two people with dentist appointments) and
  act as distractors for each other.
- ``conversations.json``: a follow-up question asked in a current session, with the earlier sessions in view
  (by session ``id``), the same question rewritten to stand alone, and where its ``answer`` is found: a message
  of an earlier session (``{"type": "message", "session", "message_index"}``, counting from 0) or a document
  section (``{"type": "document", "doc", "section"}``). ``ambiguous`` is false when the follow-up already stands
  alone, and then ``standalone`` equals it.

To add a query, append an entry to ``queries.json`` with the next free id (``q0372``, ...), the question, its
kind, the section or sections that answer it and the answering sentences copied from the document, then run
``check.py``. It reports any label that points at a missing section, an answer sentence that is not in the
labelled section, and a lexical or paraphrase query whose wording does not match its kind.

``corpus`` reads the files and is what the benchmarks use; ``check`` validates the set and prints its counts.
"""
