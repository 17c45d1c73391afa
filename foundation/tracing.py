"""The stages a trace times, named once: what a search, a recall or a chat turn spent its time on.

A trace keeps every stage's details in ``stages`` (candidates, cuts, rounds) and, apart from them, a
small ``timings`` object, {stage: milliseconds}, which is what the operators' dashboard reads for its
percentiles, so that 100,000 traces are summed without reading their candidates' lists.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping
from typing import Any

# How much of a result's text a trace keeps to show what was returned.
RESULT_TEXT_CHARS = 240
# In the order a turn goes through them: (name in ``timings``, what an operator calls it).
TIMED_STAGES: tuple[tuple[str, str], ...] = (
    ("embedding", "query embedding"),
    ("session_context", "session context"),
    ("rewrite", "query rewrite"),
    ("dense", "dense retriever (pgvector)"),
    ("keyword", "keyword retriever (BM25)"),
    ("describe", "describing the candidates"),
    ("fusion", "fusion"),
    ("directories", "directory seeds"),
    ("descent", "hierarchical descent"),
    ("memories", "memories retriever"),
    ("conversations", "conversations retriever"),
    ("search", "whole search"),
    ("prompt", "prompt assembly"),
    ("first_token", "first token"),
    ("turn", "whole turn"),
)
STAGE_LABELS: dict[str, str] = dict(TIMED_STAGES)
# A stage's name in ``stages`` where it differs from its name in ``timings``.
_TIMED_AS = {"query": "embedding", "prompt_budget": "prompt"}
# Stages that cut or adjust rather than take time, as an operator reads them.
_UNTIMED_LABELS = {
    "document_bias": "boost of documents in use",
    "score_threshold": "score threshold",
    "token_budget": "token budget",
    # Computed beside the keyword retriever: what is left of the question's embedding once that is done.
    "query_wait": "waiting for the question's vector",
}


def ms_since(started: float) -> float:
    """Milliseconds since ``started`` (a ``time.perf_counter()``), as traces record them."""
    return round((time.perf_counter() - started) * 1000, 2)


def stage_label(name: str) -> str:
    """What an operator calls the stage named ``name`` in a trace's ``stages`` or ``timings``."""
    timed = _TIMED_AS.get(name, name)
    return STAGE_LABELS.get(timed) or _UNTIMED_LABELS.get(name) or name.replace("_", " ")


def timings_of(stages: Iterable[Mapping[str, Any]], *, total_ms: float | None = None) -> dict[str, float]:
    """{stage: ms} for the timed stages among ``stages`` (a stage run twice, such as embedding an
    asked and a rewritten question, counts once with both durations), plus the whole search."""
    timings: dict[str, float] = {}
    for stage in stages:
        name = _TIMED_AS.get(stage.get("stage", ""), stage.get("stage", ""))
        if name in STAGE_LABELS and isinstance(stage.get("ms"), int | float):
            timings[name] = round(timings.get(name, 0.0) + float(stage["ms"]), 2)
    if total_ms is not None:
        timings["search"] = round(float(total_ms), 2)
    return timings
