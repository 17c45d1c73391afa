"""The evaluation set: documents, labelled queries and multi-session conversations, read from ``data/``.

    from bench.evalset import corpus
    corpus.documents()      # 45 Markdown documents
    corpus.queries()        # section-level relevance labels, graded 2 (answers) or 1 (related)
    corpus.conversations()  # follow-ups to rewrite, with where their answers live

Every function returns fresh copies, so a caller may change what it gets without affecting the next caller.
"""

from __future__ import annotations

import copy
import json
import re
from functools import cache
from pathlib import Path

DATA = Path(__file__).resolve().parent / "data"


def _read(name: str):
    return json.loads((DATA / name).read_text(encoding="utf-8"))


@cache
def _load() -> dict:
    index = _read("documents.json")
    docs = [{**d, "text": (DATA / "documents" / d["filename"]).read_text(encoding="utf-8")} for d in index]
    entities = {d["key"]: d["entities"] for d in index}

    queries, evidence = [], {}
    for q in _read("queries.json"):
        queries.append({"id": q["id"], "query": q["query"], "relevant": q["relevant"], "kind": q["kind"]})
        labelled = list(dict.fromkeys(r["doc"] for r in q["relevant"] if r["grade"] == 2))
        evidence[q["id"]] = {
            "sentences": q["answer_sentences"],
            "entities": [name for doc in labelled for name in entities[doc]],
        }

    sessions = {s["id"]: {"title": s["title"], "messages": s["messages"]} for s in _read("sessions.json")}
    conversations = []
    for c in _read("conversations.json"):
        where = c["answer_in"]
        if where["type"] == "message":
            if where["session"] not in c["earlier_sessions"]:
                raise ValueError(f"{c['id']}: answer session {where['session']!r} is not among its earlier sessions")
            index_in = c["earlier_sessions"].index(where["session"])
            where = {"type": "message", "session_index": index_in, "message_index": where["message_index"]}
        conversations.append(
            {**c, "earlier_sessions": [sessions[s] for s in c["earlier_sessions"]], "answer_in": where}
        )
    return {"documents": docs, "queries": queries, "evidence": evidence, "conversations": conversations}


def documents() -> list[dict]:
    """Markdown documents: ``{"key", "title", "filename", "text"}``, each with 4-8 ``##`` sections."""
    return [{k: d[k] for k in ("key", "title", "filename", "text")} for d in _load()["documents"]]


def names() -> dict[str, str]:
    """Document key -> the entity's own name ("Lumen K2", "billing-api"), which a vague follow-up must not use."""
    return {d["key"]: d["name"] for d in _load()["documents"]}


def queries() -> list[dict]:
    """Queries with section-level relevance: ``{"id", "query", "relevant": [{"doc", "section", "grade"}], "kind"}``.

    ``kind`` is "lexical" (shares key words with the answer), "paraphrase" (shares at most the entity name) or
    "multi" (answered by two sections). Grade 2 answers the query; grade 1 is a section that refers to the topic
    without answering it.
    """
    return copy.deepcopy(_load()["queries"])


def conversations() -> list[dict]:
    """Follow-up questions in the context of one user's earlier and current sessions.

    Each item: ``{"id", "earlier_sessions": [{"title", "messages"}], "current_session": [messages], "followup",
    "standalone", "answer_in", "answer", "ambiguous"}``. ``answer_in`` is either ``{"type": "message",
    "session_index", "message_index"}`` (into ``earlier_sessions``) or ``{"type": "document", "doc", "section"}``.
    ``answer`` is a short string found verbatim at that location. When ``ambiguous`` is false the follow-up
    already stands alone and ``standalone`` equals it.
    """
    return copy.deepcopy(_load()["conversations"])


def evidence() -> dict[str, dict]:
    """For each query id, the sentences that answer it and the entity names it may share with them.

    Not needed for scoring retrieval; it lets ``check.py`` verify that paraphrase queries really avoid the
    answer's wording, and can serve answer-level evaluation.
    """
    return copy.deepcopy(_load()["evidence"])


def section_texts() -> dict[tuple[str, str], str]:
    """``(doc key, heading) -> section body``, parsed back from the Markdown so labels are checked against it."""
    out = {}
    for d in documents():
        for heading, body in re.findall(r"^## ([^\n]+)\n\n(.*?)(?=^## |\Z)", d["text"], flags=re.M | re.S):
            out[(d["key"], heading)] = body.strip()
    return out
