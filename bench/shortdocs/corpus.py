"""The short-documents set: documents, labelled queries and a fingerprint, read from ``data/``.

    from bench.shortdocs import corpus
    corpus.documents()    # ~3,000 {"id", "title", "section", "text"}
    corpus.queries()      # {"id", "query", "kind", "relevant": [{"doc", "grade"}], "searched"}
    corpus.fingerprint()  # sha256 of both, to show two runs used the same set

Every function returns fresh copies, so a caller may change what it gets without affecting the next caller.
"""

from __future__ import annotations

import copy
import hashlib
import json
from functools import cache
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"
KINDS = ("lexical", "paraphrase", "multi")
GRADES = (1, 2)


@cache
def _documents() -> tuple[dict, ...]:
    with (DATA / "documents.jsonl").open(encoding="utf-8") as lines:
        return tuple(json.loads(line) for line in lines if line.strip())


@cache
def _queries() -> tuple[dict, ...]:
    path = DATA / "queries.json"
    return tuple(json.loads(path.read_text(encoding="utf-8"))) if path.exists() else ()


def documents() -> list[dict]:
    """Debian package descriptions: ``{"id", "title", "section", "text"}``; ``id`` is the package name."""
    return copy.deepcopy(list(_documents()))


def queries() -> list[dict]:
    """Queries with document-level labels: ``{"id", "query", "kind", "relevant": [{"doc", "grade"}], "searched"}``.

    ``kind`` is "lexical" (shares key words with its answer), "paraphrase" (says it in other words) or "multi"
    (needs two or more documents). Grade 2: the document does what is asked; grade 1: related, or does part of it.
    ``searched`` holds the regular expressions used to look for every document that answers the query.
    """
    return copy.deepcopy(list(_queries()))


def fingerprint() -> str:
    payload = json.dumps([list(_documents()), list(_queries())], sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()
