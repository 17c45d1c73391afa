"""Search traces: what one find(), search() or chat turn did, stage by stage, kept for operators."""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.db import transaction
from django.db.models import F, Func, Q, Value

from foundation.scrub import Needles, scrubbed
from foundation.tracing import RESULT_TEXT_CHARS, ms_since, timings_of
from retrieval_app.hits import Hit
from retrieval_app.models import SearchTrace


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
        self.stages.append({"stage": name, "ms": ms_since(started), **details})


def _result(hit: Hit) -> dict[str, Any]:
    """A returned hit as the trace keeps it: enough to show it and link to what it points to."""
    return {
        "uri": hit.uri,
        "kind": hit.kind,
        "origin": hit.origin,
        "title": hit.title,
        "score": hit.score,
        "source": hit.source,
        "doc_id": hit.doc_id,
        "session_id": hit.session_id,
        "text": hit.text[:RESULT_TEXT_CHARS],
        "match_reason": hit.match_reason,
    }


def search_trace_record(*, run: Run, hits: Sequence[Hit], session=None, rewrite=None, save: bool = True) -> SearchTrace:
    total_ms = ms_since(run.started)
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
        results=[_result(hit) for hit in hits],
        total_ms=total_ms,
        timings=timings_of(run.stages, total_ms=total_ms),
    )
    if save:
        trace.save(force_insert=True)
    return trace


def search_trace_failed(*, owner, kind: str, query: str, error: str, session=None) -> SearchTrace:
    """The trace of a search that raised before it could record its own: what was asked, and why it
    failed (unsaved, like a chat's trace, until the turn ends)."""
    return SearchTrace(
        owner=owner,
        session=session,
        kind=kind,
        query=query,
        outcome=SearchTrace.Outcome.RETRIEVAL_FAILED,
        error=error[:2000],
    )


def search_trace_add_stage(*, trace: SearchTrace, stage: dict[str, Any]) -> None:
    """A stage that happened after the search (the chat's prompt assembly), on a trace not yet stored."""
    trace.stages = [*trace.stages, stage]
    trace.timings = {**trace.timings, **timings_of([stage])}


def search_trace_finish(
    *, trace: SearchTrace, outcome: str, error: str = "", timings: dict[str, float] | None = None
) -> None:
    """Stores a chat turn's trace once the turn is over: how it ended and, beside the search's stages,
    the turn's own times (the first token, the whole turn)."""
    trace.outcome = outcome
    trace.error = (error or trace.error)[:2000]
    trace.timings = {**trace.timings, **(timings or {})}
    if trace._state.adding:
        trace.save(force_insert=True)
    else:
        trace.save(update_fields=["outcome", "error", "timings"])


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


# Traces deleted per transaction when old ones are pruned.
PRUNE_BATCH = 5000

# The columns of a trace that may name what a search found (its query and timings name nothing of it).
FOUND_COLUMNS = ("results", "stages", "plan", "rewrite_decision")


def search_traces_forget(*, owner_id: int, needles: Needles, **_: Any) -> int:
    """Takes a deleted thing (a document, a conversation, a memory, named by ``needles``) out of the
    owner's search traces: every result, candidate and passage that names it goes, with the words it
    quoted, and so does a search scoped to it. The traces stay, for the operators' figures; how many
    changed. Runs in the deleting transaction (``document_deleted``, ``session_deleted``,
    ``memory_deleted``)."""
    if not needles:
        return 0
    scoped = Q(target_uri__in=needles.whole) | _inside("target_uri", needles)
    candidates = (
        SearchTrace.objects.filter(owner_id=owner_id)
        .annotate(**needles.annotations(*FOUND_COLUMNS))
        .filter(needles.as_sql_filter(*FOUND_COLUMNS) | scoped)
        .only("id", "target_uri", "result_count", *FOUND_COLUMNS)
    )
    changed = []
    for trace in candidates:
        for column in FOUND_COLUMNS:
            setattr(trace, column, scrubbed(getattr(trace, column), needles))
        trace.target_uri = scrubbed(trace.target_uri, needles)
        trace.result_count = len(trace.results)
        changed.append(trace)
    SearchTrace.objects.bulk_update(changed, [*FOUND_COLUMNS, "target_uri", "result_count"], batch_size=200)
    return len(changed)


def _inside(column: str, needles: Needles) -> Q:
    wanted = Q(pk__in=[])
    for needle in needles.inside:
        wanted |= Q(**{f"{column}__contains": needle})
    return wanted


def search_traces_forget_document(*, document_id: uuid.UUID, owner_id: int | None = None, **_: Any) -> None:
    """A deleted document leaves every trace that mentions it (in the deleting transaction): its id, and
    the results and candidates that quoted its passages."""
    SearchTrace.objects.filter(document_ids__contains=[document_id]).update(
        document_ids=Func(F("document_ids"), Value(document_id), function="array_remove")
    )
    if owner_id is not None:
        search_traces_forget(owner_id=owner_id, needles=Needles(inside=(str(document_id),)))


def search_traces_prune(*, before: datetime, batch: int = PRUNE_BATCH) -> int:
    """Deletes the search traces made before ``before``, ``batch`` at a time, each batch in a transaction
    of its own (a year of traces is never one long lock); how many went."""
    deleted = 0
    while True:
        with transaction.atomic():
            ids = list(SearchTrace.objects.filter(created_at__lt=before).values_list("id", flat=True)[:batch])
            if ids:
                deleted += SearchTrace.objects.filter(id__in=ids).delete()[0]
        if len(ids) < batch:
            return deleted
