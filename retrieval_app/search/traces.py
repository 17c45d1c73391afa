"""Search traces: what one find(), search() or chat turn did, stage by stage, kept for operators."""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.db.models import F, Func, Value

from retrieval_app.models import SearchTrace
from retrieval_app.search.hits import Hit


@dataclass
class Run:
    """One search in progress: what it has done so far, in the order the trace shows it."""

    owner: Any
    kind: str
    query: str
    started: float = field(default_factory=time.perf_counter)
    stages: list[dict[str, Any]] = field(default_factory=list)
    plan: dict[str, Any] = field(default_factory=dict)

    def stage(self, name: str, started: float, **details: Any) -> None:
        self.stages.append({"stage": name, "ms": round((time.perf_counter() - started) * 1000, 2), **details})


def search_trace_record(*, run: Run, hits: Sequence[Hit], session=None, rewrite=None, save: bool = True) -> SearchTrace:
    trace = SearchTrace(
        owner=run.owner,
        session=session,
        kind=run.kind,
        query=run.query,
        rewritten_query=rewrite.query if rewrite and rewrite.rewritten else "",
        rewrite_decision=rewrite.as_dict() if rewrite else {},
        target_uri=run.plan.get("target_uri", ""),
        plan=run.plan,
        stages=run.stages,
        document_ids=sorted({uuid.UUID(h.doc_id) for h in hits if h.doc_id}),
        result_count=len(hits),
        total_ms=round((time.perf_counter() - run.started) * 1000, 2),
    )
    if save:
        trace.save(force_insert=True)
    return trace


def search_trace_save(*, trace: SearchTrace, stage: dict[str, Any] | None = None) -> None:
    """Stores a trace a search left unsaved, with a stage that happened after the search (the chat's
    prompt budget) when there is one; a trace already stored only gets the stage added."""
    if stage is not None:
        trace.stages = [*trace.stages, stage]
    if trace._state.adding:
        trace.save(force_insert=True)
    elif stage is not None:
        trace.save(update_fields=["stages"])


def search_trace_dict(trace: SearchTrace) -> dict[str, Any]:
    return {
        "id": str(trace.id),
        "kind": trace.kind,
        "query": trace.query,
        "target_uri": trace.target_uri,
        "rewrite": trace.rewrite_decision,
        "rewritten_query": trace.rewritten_query,
        "plan": trace.plan,
        "stages": trace.stages,
        "result_count": trace.result_count,
        "total_ms": trace.total_ms,
    }


def search_traces_forget_document(*, document_id: uuid.UUID, **_: Any) -> None:
    """A deleted document's id leaves every trace that mentions it (in the deleting transaction)."""
    SearchTrace.objects.filter(document_ids__contains=[document_id]).update(
        document_ids=Func(F("document_ids"), Value(document_id), function="array_remove")
    )
