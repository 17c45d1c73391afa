"""The operators' pages, beside the admin and behind its sign-in: the dashboard, a search trace made
readable, and one conversation with everything derived from it. Thin: the selectors read, the charts
draw, the templates lay out.

Staff see them once granted the admin's permission to view the rows they summarise (superusers have
every permission), as with the admin's own lists."""

from __future__ import annotations

import json
import threading
from typing import Any

from django.contrib import admin
from django.contrib.auth import get_permission_codename, get_user_model
from django.core.cache import cache
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone

from foundation import health
from foundation.connections import release_database_connections
from foundation.models import ModelCall
from foundation.tracing import STAGE_LABELS, stage_label
from operations_app import charts, selectors
from retrieval_app.models import SearchTrace
from sessions_app.models import ChatSession, Message
from sessions_app.services import working_set_get
from sessions_app.uris import memory_id_of, message_ref_of

# The workers are asked over the broker and answer within a second; the dashboard reuses an answer
# this recent rather than wait that second on every load.
QUEUE_STATUS_CACHE_S = 15
QUEUE_STATUS_KEY = "ops:queue-status"


def _view_permission(model) -> str:
    """The permission to view ``model``'s rows, named from the model, wherever its app is."""
    return f"{model._meta.app_label}.{get_permission_codename('view', model._meta)}"


DASHBOARD_PERMISSIONS = (_view_permission(SearchTrace), _view_permission(ModelCall))
SESSION_PERMISSIONS = (_view_permission(ChatSession), _view_permission(Message))
# What each kind of trace counts, as the dashboard says it.
KIND_LABELS = {"chat": "chat turns", "search": "searches", "find": "finds", "recall": "recalls"}


def _require(request: HttpRequest, *permissions: str) -> None:
    if not request.user.has_perms(permissions):
        raise PermissionDenied


def _queue_status() -> dict[str, Any]:
    """The queues as the dashboard shows them, with the problems of the workers and the queues."""

    def ask() -> dict[str, Any]:
        report = health.workers_report()
        return {**report["queues"], "problems": report["problems"], "checked_at": timezone.now()}

    return cache.get_or_set(QUEUE_STATUS_KEY, ask, QUEUE_STATUS_CACHE_S)


# What every user keeps, and who was active, are read over whole tables (a second at tens of millions of
# rows) and change slowly: the dashboard reuses an answer this recent, and says when it was computed.
KEPT_FOR_S = 300


def _owner_filter(request: HttpRequest) -> tuple[int | None, str, str]:
    """The user the dashboard is narrowed to (``?user=<username>``): (id, username, error)."""
    username = request.GET.get("user", "").strip()[:150]
    if not username:
        return None, "", ""
    user_id = get_user_model().objects.filter(username=username).values_list("id", flat=True).first()
    if user_id is None:
        return None, username, f"There is no user called {username!r}; showing everyone."
    return user_id, username, ""


# The dashboard reads whole tables, for up to a second each at scale: this many are drawn at once per web
# process, the others wait their turn (without a database connection) for at most DASHBOARD_WAIT_S and
# are then told to try again. A burst of dashboard loads never takes the pool every person's request needs.
DASHBOARD_AT_ONCE = 2
DASHBOARD_WAIT_S = 20.0
_dashboards = threading.BoundedSemaphore(DASHBOARD_AT_ONCE)


def dashboard(request: HttpRequest) -> HttpResponse:
    _require(request, *DASHBOARD_PERMISSIONS)
    release_database_connections()  # waiting holds no connection
    if not _dashboards.acquire(timeout=DASHBOARD_WAIT_S):
        return HttpResponse(
            "The dashboard is being drawn for others already; reload in a few seconds.",
            status=503,
            content_type="text/plain",
            headers={"Retry-After": "5"},
        )
    try:
        return _dashboard(request)
    finally:
        _dashboards.release()


def _dashboard(request: HttpRequest) -> HttpResponse:
    period = selectors.period_of(request.GET.get("period", ""))
    owner_id, username, user_error = _owner_filter(request)
    labels = [charts.bucket_label(moment, period.bucket) for moment in period.buckets()]

    activity = selectors.dashboard_activity(period=period, owner_id=owner_id)
    traces = sum(activity.totals.values())
    latency = selectors.dashboard_latency(period=period, owner_id=owner_id, traces=traces)
    turn_latency = selectors.dashboard_turn_latency(period=period, owner_id=owner_id, turns=activity.totals["chat"])
    costs = selectors.dashboard_costs(period=period, owner_id=owner_id)
    failures = selectors.dashboard_failures(period=period, owner_id=owner_id)
    ingestion = selectors.dashboard_ingestion(period=period, owner_id=owner_id)
    storage = cache.get_or_set(
        f"ops:storage:{owner_id}", lambda: selectors.dashboard_storage(owner_id=owner_id), KEPT_FOR_S
    )
    queues = _queue_status()
    context = {
        **admin.site.each_context(request),
        "title": "Dashboard",
        "period": period,
        "periods": list(selectors.PERIODS),
        "username": username,
        "user_error": user_error,
        "active_users": cache.get_or_set(
            f"ops:users:{period.name}", lambda: selectors.users_with_activity(period=period), KEPT_FOR_S
        ),
        "labels": labels,
        **_activity_section(period, labels, activity),
        **_latency_section(period, labels, latency, turn_latency),
        **_costs_section(costs),
        **_failures_section(period, labels, activity, costs),
        "failures": failures,
        **_ingestion_section(period, labels, ingestion),
        "queues": queues,
        "storage": storage,
    }
    return render(request, "admin/ops/dashboard.html", context)


def _activity_section(period: selectors.Period, labels: list[str], activity: selectors.Activity) -> dict[str, Any]:
    """The requests per bucket, each kind of trace under the name the dashboard gives it."""
    return {
        "activity": activity,
        "activity_chart": charts.stacked_bars(
            title="Requests per " + period.bucket,
            labels=labels,
            series={KIND_LABELS[kind]: values for kind, values in activity.requests.series.items()},
        ),
        "activity_legend": charts.legend([KIND_LABELS[kind] for kind in activity.requests.series]),
        "activity_totals": [(KIND_LABELS[kind], total) for kind, total in activity.totals.items()],
        "activity_rows": _rows(labels, activity.requests.series),
    }


def _latency_section(
    period: selectors.Period, labels: list[str], latency: selectors.Latency, turn_latency: selectors.Series
) -> dict[str, Any]:
    """How long each stage takes (p50, p95), and how long a whole chat turn took per bucket."""
    return {
        "latency": latency,
        "latency_chart": charts.horizontal_bars(
            title="Latency per stage (ms)",
            rows=[(stage.label, (stage.p50, stage.p95)) for stage in latency.stages],
            names=("p50", "p95"),
            unit="ms",
        )
        if latency.stages
        else "",
        "latency_legend": charts.legend(["p50", "p95"]),
        "kinds": selectors.TRACE_KINDS,
        "turn_chart": charts.lines(
            title="Chat turn latency per " + period.bucket, labels=labels, series=turn_latency.series, unit="ms"
        ),
        "turn_legend": charts.legend(list(turn_latency.series)),
        "turn_rows": _rows(labels, turn_latency.series),
    }


def _costs_section(costs: selectors.Costs) -> dict[str, Any]:
    """What the model calls cost and how many tokens they used, per day."""
    day_labels = [charts.bucket_label(day, "day") for day in costs.days]
    return {
        "costs": costs,
        "cost_chart": charts.stacked_bars(
            title="Cost per day (USD)", labels=day_labels, series=costs.cost_by_day, unit="$"
        ),
        "tokens_chart": charts.stacked_bars(title="Tokens per day", labels=day_labels, series=costs.tokens_by_day),
        "cost_legend": charts.legend(list(costs.cost_by_day)),
    }


def _failures_section(
    period: selectors.Period, labels: list[str], activity: selectors.Activity, costs: selectors.Costs
) -> dict[str, Any]:
    """The errors and fallbacks of the traces beside the model calls that failed, per bucket and in all."""
    failure_names = [name for name in activity.failures.series if activity.failures.total(name)]
    return {
        "failure_chart": charts.stacked_bars(
            title="Errors and fallbacks per " + period.bucket,
            labels=labels,
            series={
                **{name.replace("_", " "): activity.failures.series[name] for name in failure_names},
                **{f"{kind} call failed": values for kind, values in costs.failures.series.items() if sum(values)},
            },
        ),
        "failure_totals": [
            (name.replace("_", " "), int(activity.failures.total(name))) for name in activity.failures.series
        ]
        + [(f"{kind} calls failed", int(costs.failures.total(kind))) for kind in costs.failures.series],
    }


def _ingestion_section(period: selectors.Period, labels: list[str], ingestion: selectors.Ingestion) -> dict[str, Any]:
    """The documents indexed and failed per bucket, with the nodes the indexed ones made."""
    return {
        "ingestion": ingestion,
        "ingestion_chart": charts.stacked_bars(
            title="Documents indexed and failed per " + period.bucket,
            labels=labels,
            series={"ready": ingestion.indexed.series["documents"], "failed": ingestion.failed.series["documents"]},
        ),
        "ingestion_rows": _rows(
            labels,
            {
                "ready": ingestion.indexed.series["documents"],
                "nodes": ingestion.indexed.series["nodes"],
                "failed": ingestion.failed.series["documents"],
            },
        ),
    }


def _rows(labels: list[str], series: dict[str, list[float]]) -> list[tuple[str, list[float]]]:
    """A chart's numbers as table rows (bucket, values in series order), the empty buckets left out."""
    return (
        [
            (label, values)
            for label, values in zip(labels, zip(*series.values(), strict=True), strict=True)
            if any(values)
        ]
        if series
        else []
    )


def trace(request: HttpRequest, trace_id) -> HttpResponse:
    _require(request, _view_permission(SearchTrace))
    try:
        view = selectors.trace_detail(trace_id=trace_id)
    except SearchTrace.DoesNotExist as exc:
        raise Http404("No such trace.") from exc
    context = {
        **admin.site.each_context(request),
        "title": f"Trace: {view.trace.query[:80]}",
        "view": view,
        "t": view.trace,
        "stages": [_stage_for_page(stage, view) for stage in view.stages],
        "waterfall": [
            {
                **bar,
                "left": 100 * bar["offset_ms"] / view.total_ms if view.total_ms else 0,
                "width": max(0.4, 100 * bar["ms"] / view.total_ms) if view.total_ms else 0,
            }
            for bar in view.waterfall
        ],
        "raw": json.dumps(
            {
                "rewrite_decision": view.trace.rewrite_decision,
                "plan": view.trace.plan,
                "stages": view.trace.stages,
                "results": view.trace.results,
                "timings": view.trace.timings,
            },
            indent=2,
            default=str,
        ),
        "stage_labels": STAGE_LABELS,
    }
    return render(request, "admin/ops/trace.html", context)


# The parts of a stage shown as its own fields above its table, the rest being lists of candidates.
_STAGE_SCALARS = (
    "retriever",
    "method",
    "threshold",
    "directory_threshold",
    "alpha",
    "factor",
    "max_tokens",
    "used",
    "source",
    "converged",
    "model",
    "embedded",
    "rewritten",
    "reason",
    "query",
    "error",
)


def _stage_for_page(stage: dict[str, Any], view: selectors.TraceView) -> dict[str, Any]:
    """One stage as the page shows it: its scalar facts, and each list of candidates as rows with the
    title and section of what they point to."""
    facts = [
        (key.replace("_", " "), stage[key])
        for key in _STAGE_SCALARS
        if key in stage and stage[key] not in (None, "", [])
    ]
    tables = []
    for key, value in stage.items():
        if key in ("stage", "ms") or key in _STAGE_SCALARS:
            continue
        if isinstance(value, list) and value and all(isinstance(item, dict) and "uri" in item for item in value):
            tables.append((key.replace("_", " "), [_candidate_row(item, view) for item in value]))
        elif isinstance(value, list) and value and all(isinstance(item, str) for item in value):
            facts.append((key.replace("_", " "), ", ".join(_uri_label(item, view) for item in value[:30])))
        elif key == "rounds" and isinstance(value, list):
            facts.append(("rounds", f"{len(value)} rounds of expansion"))
        elif not isinstance(value, list | dict):
            facts.append((key.replace("_", " "), value))
        elif isinstance(value, dict) and value:
            facts.append((key.replace("_", " "), ", ".join(f"{k}: {v}" for k, v in list(value.items())[:12])))
    return {
        "name": stage.get("stage", ""),
        "label": stage_label(stage.get("stage", "")),
        "ms": stage.get("ms", 0),
        "facts": facts,
        "tables": tables,
    }


def _uri_label(uri: str, view: selectors.TraceView) -> str:
    node = view.nodes.get(uri)
    if node:
        return f"{node.document} / {node.section or node.title}" if node.kind != "document" else node.document
    return uri


def _candidate_row(item: dict[str, Any], view: selectors.TraceView) -> dict[str, Any]:
    uri = item["uri"]
    node = view.nodes.get(uri)
    row = {
        "uri": uri,
        "score": item.get("score"),
        "own": item.get("own"),
        "dense": item.get("dense"),
        "keyword": item.get("keyword"),
        "matched": ", ".join(item.get("matched") or []),
        "via": item.get("via") or [],
        "title": "",
        "section": "",
        "document": "",
        "doc_id": None,
        "session_id": None,
        "message_seq": None,
    }
    if node:
        row |= {"title": node.title, "section": node.section, "document": node.document, "doc_id": node.doc_id}
    else:
        ref = message_ref_of(uri)
        memory_id = memory_id_of(uri)
        if ref and ref[1] in view.messages:
            message = view.messages[ref[1]]
            row |= {
                "title": message.content[:120],
                "session_id": ref[0],
                "message_seq": message.seq,
                "document": f"conversation turn {message.seq} ({message.role})",
            }
        elif memory_id and memory_id in view.memories:
            memory = view.memories[memory_id]
            row |= {"title": memory.content[:120], "section": f"{memory.category} / {memory.key}", "document": "memory"}
    return row


def session(request: HttpRequest, session_id) -> HttpResponse:
    _require(request, *SESSION_PERMISSIONS)
    try:
        page = int(request.GET.get("page", "1"))
    except ValueError:
        page = 1
    try:
        view = selectors.session_detail(session_id=session_id, page=page)
    except ChatSession.DoesNotExist as exc:
        raise Http404("No such conversation.") from exc
    context = {
        **admin.site.each_context(request),
        "title": f"Conversation: {view.session}",
        "view": view,
        "s": view.session,
        "working_set": working_set_get(session_id=str(view.session.id)).as_dict(),
        "stage_labels": STAGE_LABELS,
        "model_call_kinds": ModelCall.Kind,
    }
    return render(request, "admin/ops/session.html", context)
