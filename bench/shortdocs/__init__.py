"""A labelled set of many short documents, for measuring document retrieval on a library of short texts.

The other retrieval set, ``bench/evalset``, is 45 long manuals with 4-8 sections each. Real libraries are
also thousands of short texts (abstracts, notes, catalogue entries) with one paragraph each, where ranking
documents first and then their sections has little to descend into. This set measures that case.

**The documents** (``data/documents.jsonl``, one JSON object a line: ``id``, ``title``, ``section``,
``text``) are 3,098 Debian package descriptions, 40-296 words each (81 on average). The title is the
package name and its one-line summary ("tcpdump - command-line network traffic analyzer"); the text is
the long description with Debian's " ." paragraph markers turned into blank lines and wrapped list items
joined. ``build.py`` made them from Debian 12 (bookworm)'s package indexes as apt keeps them in
``/var/lib/apt/lists`` (the ``Packages`` index for the summary, section and source package, and the
``Translation-en`` index for the long description, fetched with ``apt-get update -o Acquire::Languages=en``).
It keeps one package per source package (no ``-dev``, ``-doc``, ``-dbg``, ``-data``, ``-common`` or library
soname variants, no transitional or meta packages), drops a description sharing 40% of its word 4-grams
with one already kept or repeating a kept summary, and takes a fixed number from each Debian section, so
the set mixes science (210), games (210), networking (200), utilities (200), sound, graphics, system
administration, development, text processing, fonts, the X11, GNOME, KDE and Xfce desktops, editors,
mathematics, video, web, mail, databases, electronics, amateur radio, education and a small share of
language libraries, 45 sections in all. Which packages a section gives is fixed by a hash of their names.

**Licence.** Every package in Debian's main archive meets the Debian Free Software Guidelines. A
description is part of its source package's ``debian/control`` and is distributed under that package's
free licence, as its ``debian/copyright`` states (most often the GPL, a BSD or MIT licence, or the
Artistic licence); Debian publishes the descriptions in the ``Packages`` and ``Translation-en`` indexes.

**The queries** (``data/queries.json``: ``id``, ``query``, ``kind``, ``relevant``, ``searched``) are 324
requests written as a person looking for software would write them, not copied from the descriptions:

- ``lexical`` (128, 40%): shares the key words with its answer ("Bayesian spam filter that learns from my
  mail");
- ``paraphrase`` (131, 40%): says it in other words ("keep the pictures folder on my laptop identical to the
  copy on my home server"); they still share about two ordinary words on average with their closest answer
  (lexical queries about four), which ``check.py`` prints;
- ``multi`` (65, 20%): asks for a kind of software several documents provide ("password managers I could
  choose from on Linux"), with at least two grade-2 documents.

``relevant`` grades documents: 2 does what is asked, 1 is related or does part of it (a front-end to the
tool that does it, a plugin, a library, a viewer when an editor was asked for). Each query was written for
one document, then completed: ``candidates.py`` listed every document matching any of the regular
expressions in the query's ``searched`` (its key words and their synonyms), and each candidate's title,
and its text where the title left it open, was read and graded. On average a query has 3.3 labels (2.1 of
grade 2); 989 documents are labelled by at least one query.

**Known limits.** The labels are one labeller's judgement, made quickly, and the line between grade 1 and
no label is the least sure part. They are as complete as their search terms: a document answering a query
in words none of its ``searched`` expressions match stays unlabelled, and for broad terms with long
candidate lists the documents matching the most terms were read most carefully. The queries are English
and about software; the documents are one kind of text (package descriptions, often starting with the
package's own name), short enough that nearly every document is a single chunk. Package names often
appear in lexical queries' answers' titles, which favours keyword retrieval there; paraphrases avoid them.

**Use.** ``corpus`` reads the files and is what the benchmark uses; ``check.py`` validates the set and
prints its counts and fingerprint; ``build.py`` rebuilds the documents; ``candidates.py`` lists documents
matching a query's terms when labelling. To add a query, append it to ``queries.json`` with the next free
id, its kind, its labels and the expressions used to look for every document that answers it, then run
``check.py``. Measure with ``.venv/bin/python bench/retrieval_eval.py --set shortdocs``.
"""
