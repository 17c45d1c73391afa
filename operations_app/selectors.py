"""What the operators' pages read: the dashboard's aggregates over a period (and optionally one user),
one search trace made readable, and one conversation with everything derived from it.

Every aggregate is computed live, from indexes, and never writes:

- activity, latency, errors: ``SearchTrace`` rows of the period, found through its ``created_at`` index
  (or ``owner, created_at``); percentiles read the small ``timings`` column, never the stages' lists;
- tokens and cost: ``ModelCall`` rows of the period, likewise; failures through partial indexes that
  hold only the failed rows;
- storage: counts per user through the ``owner, …, embedding_model`` indexes, so each is an index-only
  scan: the vectors are the rows whose ``embedding_model`` is set.

Live aggregates are exact and always current, and at 1M messages and 100k traces a whole dashboard
stays well under a second (``bench/dashboard.py`` measures it), so no rollup table, and no periodic job
that could fall behind, is needed.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from django.contrib.auth import get_user_model
from django.db import connection
from django.db.models import Count, Min, Q, QuerySet, Sum
from django.db.models.functions import Trunc
from django.utils import timezone

from documents_app.models import Document, DocumentNode
from documents_app.uris import parse_resource_uri
from foundation.models import ModelCall, QueuedTask
from foundation.tracing import STAGE_LABELS, TIMED_STAGES, stage_label
from operations_app.shown import ShownMetadata, shown_metadata
from retrieval_app.models import SearchTrace
from sessions_app.models import Archive, ChatSession, Memory, Message
from sessions_app.selectors import metadata_loaded, with_metadata_text
from sessions_app.uris import memory_id_of, message_ref_of

# The periods an operator can choose: how far back, and the width of a chart's bars.
PERIODS: dict[str, tuple[int, str]] = {"24h": (24, "hour"), "7d": (7, "day"), "30d": (30, "day")}
DEFAULT_PERIOD = "24h"
LATEST_FAILURES = 10
STORAGE_TOP_USERS = 25
TRACE_KINDS = [kind for kind, _ in SearchTrace.Kind.choices]


@dataclass(frozen=True)
class Period:
    """The last ``count`` hours or days, the current one included: [start, now)."""

    name: str
    count: int
    bucket: str  # "hour" or "day"
    start: datetime
    end: datetime

    @property
    def step(self) -> timedelta:
        return timedelta(hours=1) if self.bucket == "hour" else timedelta(days=1)

    def buckets(self) -> list[datetime]:
        return [self.start + i * self.step for i in range(self.count)]


def period_of(name: str, *, now: datetime | None = None) -> Period:
    """The period called ``name`` (24h, 7d, 30d; anything else is the default) ending now."""
    name = name if name in PERIODS else DEFAULT_PERIOD
    count, bucket = PERIODS[name]
    now = now or timezone.now()
    current = now.astimezone(UTC).replace(minute=0, second=0, microsecond=0)
    if bucket == "day":
        current = current.replace(hour=0)
    step = timedelta(hours=1) if bucket == "hour" else timedelta(days=1)
    return Period(name=name, count=count, bucket=bucket, start=current - (count - 1) * step, end=now)


def _in_period(queryset: QuerySet, period: Period, owner_id: int | None, field_name: str = "created_at") -> QuerySet:
    queryset = queryset.filter(**{f"{field_name}__gte": period.start})
    return queryset.filter(owner_id=owner_id) if owner_id is not None else queryset


def _bucketed(queryset: QuerySet, period: Period, field_name: str = "created_at") -> QuerySet:
    return queryset.annotate(bucket=Trunc(field_name, period.bucket, tzinfo=UTC))


@dataclass
class Series:
    """Values per bucket, one list per named series, aligned with ``buckets``."""

    buckets: list[datetime]
    series: dict[str, list[float]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self._index = {moment: index for index, moment in enumerate(self.buckets)}

    def add(self, name: str, bucket: datetime, value: float) -> None:
        values = self.series.setdefault(name, [0] * len(self.buckets))
        # A row stamped after the period was computed (written meanwhile, or a clock ahead) is left out.
        if bucket in self._index:
            values[self._index[bucket]] += value

    def total(self, name: str) -> float:
        return sum(self.series.get(name, []))


def _series(period: Period, names: Iterable[str]) -> Series:
    result = Series(buckets=period.buckets())
    for name in names:
        result.series[name] = [0] * period.count
    return result


# --- Activity and errors, from the traces -----------------------------------------------------------


@dataclass
class Activity:
    """How busy: chat turns, recalls, finds and searches per bucket; and what went wrong with them."""

    requests: Series
    failures: Series  # per outcome other than ok, plus rewrite fallbacks
    totals: dict[str, int]


# Outcomes an operator counts as errors or fallbacks, in the order the dashboard lists them.
FAILURE_OUTCOMES = [outcome for outcome, _ in SearchTrace.Outcome.choices if outcome != SearchTrace.Outcome.OK]
REWRITE_FALLBACK = "rewrite_fallback"


def dashboard_activity(*, period: Period, owner_id: int | None = None) -> Activity:
    rows = (
        _bucketed(_in_period(SearchTrace.objects.all(), period, owner_id), period)
        .values("bucket", "kind", "outcome")
        .annotate(n=Count("id"), rewrite_failed=Count("id", filter=Q(rewrite_decision__has_key="error")))
        .order_by()
    )
    requests = _series(period, TRACE_KINDS)
    failures = _series(period, [*FAILURE_OUTCOMES, REWRITE_FALLBACK])
    for row in rows:
        requests.add(row["kind"], row["bucket"], row["n"])
        if row["outcome"] != SearchTrace.Outcome.OK:
            failures.add(row["outcome"], row["bucket"], row["n"])
        if row["rewrite_failed"]:
            failures.add(REWRITE_FALLBACK, row["bucket"], row["rewrite_failed"])
    totals = {kind: int(requests.total(kind)) for kind in TRACE_KINDS}
    return Activity(requests=requests, failures=failures, totals=totals)


# --- Latency, from the traces' timings --------------------------------------------------------------


@dataclass
class StageLatency:
    stage: str
    label: str
    count: int
    p50: float
    p95: float
    max: float
    by_kind: dict[str, tuple[int, float, float]]  # kind: (count, p50, p95)

    @property
    def cells(self) -> list[tuple[int, float, float] | None]:
        """``by_kind`` in the order of TRACE_KINDS, None where a kind has no such stage."""
        return [self.by_kind.get(kind) for kind in TRACE_KINDS]


# Percentiles are exact over at most this many traces; a period holding more is sampled uniformly (by a
# hash of each trace's id, so a reload gives the same figures), which keeps the dashboard's cost bounded
# whatever the traffic: p95 over a uniform sample of 10,000 is off by well under a percentile point.
LATENCY_SAMPLE = 10_000
_HASH_SPACE = 1 << 20


@dataclass
class Latency:
    stages: list[StageLatency]
    traces: int  # the traces of the period the percentiles are over
    sampled_from: int | None  # the period's traces, when a sample of them was used


def _sample(count: int | None) -> tuple[str, list[Any], int | None]:
    """The SQL condition (and its parameter) keeping a uniform sample of about LATENCY_SAMPLE of
    ``count`` traces, or nothing when they are few enough to be read whole."""
    if not count or count <= LATENCY_SAMPLE:
        return "", [], None
    return "AND (hashtext(s.id::text) & %s) < %s", [_HASH_SPACE - 1, _HASH_SPACE * LATENCY_SAMPLE // count], count


_LATENCY_SQL = """
SELECT s.kind, t.key, GROUPING(s.kind) AS all_kinds, count(*),
       percentile_cont(ARRAY[0.5, 0.95]) WITHIN GROUP (ORDER BY t.value::float8),
       max(t.value::float8)
FROM retrieval_app_searchtrace s CROSS JOIN LATERAL jsonb_each_text(s.timings) t
WHERE s.created_at >= %s {owner} {sample}
GROUP BY GROUPING SETS ((t.key), (s.kind, t.key))
"""


def dashboard_latency(*, period: Period, owner_id: int | None = None, traces: int | None = None) -> Latency:
    """p50 and p95 (interpolated, as PostgreSQL's ``percentile_cont``) of every timed stage, over all
    kinds and per kind, in the order a turn goes through them. ``traces`` is how many the period holds
    (the activity's total), for the sample; unknown, all are read."""
    condition, sample_params, sampled_from = _sample(traces)
    params: list[Any] = [period.start, *([owner_id] if owner_id is not None else []), *sample_params]
    sql = _LATENCY_SQL.format(owner="AND s.owner_id = %s" if owner_id is not None else "", sample=condition)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    overall: dict[str, tuple[int, float, float, float]] = {}
    by_kind: dict[str, dict[str, tuple[int, float, float]]] = defaultdict(dict)
    for kind, stage, all_kinds, count, (p50, p95), longest in rows:
        if all_kinds:
            overall[stage] = (count, p50, p95, longest)
        else:
            by_kind[stage][kind] = (count, round(p50, 1), round(p95, 1))
    stages = [
        StageLatency(
            stage=stage,
            label=label,
            count=overall[stage][0],
            p50=round(overall[stage][1], 1),
            p95=round(overall[stage][2], 1),
            max=round(overall[stage][3], 1),
            by_kind=by_kind[stage],
        )
        for stage, label in TIMED_STAGES
        if stage in overall
    ]
    used = overall["search"][0] if "search" in overall else max((s.count for s in stages), default=0)
    return Latency(stages=stages, traces=used, sampled_from=sampled_from)


_LATENCY_OVER_TIME_SQL = """
SELECT date_trunc(%s, s.created_at AT TIME ZONE 'UTC') AS bucket, t.key,
       percentile_cont(ARRAY[0.5, 0.95]) WITHIN GROUP (ORDER BY t.value::float8)
FROM retrieval_app_searchtrace s CROSS JOIN LATERAL jsonb_each_text(s.timings) t
WHERE s.created_at >= %s AND s.kind = 'chat' AND t.key IN ('turn', 'first_token') {owner} {sample}
GROUP BY 1, 2
"""


def dashboard_turn_latency(*, period: Period, owner_id: int | None = None, turns: int | None = None) -> Series:
    """p50 and p95 of the first token and of the whole chat turn, per bucket (0 where none); over a
    uniform sample when the period holds more than LATENCY_SAMPLE ``turns``."""
    condition, sample_params, _ = _sample(turns)
    params: list[Any] = [period.bucket, period.start, *([owner_id] if owner_id is not None else []), *sample_params]
    sql = _LATENCY_OVER_TIME_SQL.format(owner="AND s.owner_id = %s" if owner_id is not None else "", sample=condition)
    with connection.cursor() as cursor:
        cursor.execute(sql, params)
        rows = cursor.fetchall()
    series = _series(period, ["whole turn p50", "whole turn p95", "first token p50", "first token p95"])
    for bucket, stage, (p50, p95) in rows:
        bucket, name = bucket.replace(tzinfo=UTC), STAGE_LABELS[stage]
        series.add(f"{name} p50", bucket, round(p50, 1))
        series.add(f"{name} p95", bucket, round(p95, 1))
    return series


# --- Tokens, cost and model failures, from the model calls ------------------------------------------


@dataclass
class ModelUsage:
    model: str
    kind: str
    backend: str
    calls: int
    input_tokens: int
    output_tokens: int
    cost_usd: Decimal
    failures: int


@dataclass
class Costs:
    """Tokens and cost per model per day (always by day: that is how bills are read)."""

    days: list[datetime]
    per_model: list[ModelUsage]  # the period's totals per model, costliest first
    cost_by_day: dict[str, list[float]]  # model: cost per day
    tokens_by_day: dict[str, list[int]]  # model: tokens (in + out) per day
    by_day: list[tuple[datetime, str, int, int, int, Decimal]]  # (day, model, calls, in, out, cost)
    failures: Series  # failed calls per bucket: embedding, generation

    @property
    def total_cost(self) -> Decimal:
        return sum((usage.cost_usd for usage in self.per_model), Decimal(0))

    @property
    def total_tokens(self) -> int:
        return sum(usage.input_tokens + usage.output_tokens for usage in self.per_model)


def dashboard_costs(*, period: Period, owner_id: int | None = None) -> Costs:
    calls = _in_period(ModelCall.objects.all(), period, owner_id)
    rows = list(
        calls.annotate(day=Trunc("created_at", "day", tzinfo=UTC))
        .values("day", "model", "kind", "backend")
        .annotate(
            calls=Count("id"),
            input_tokens=Sum("input_tokens"),
            output_tokens=Sum("output_tokens"),
            cost=Sum("cost_usd"),
            failures=Count("id", filter=Q(ok=False)),
        )
        .order_by("day", "model")
    )
    first_day = period.start.replace(hour=0)
    days = [first_day + timedelta(days=i) for i in range((period.end.astimezone(UTC) - first_day).days + 1)]
    totals: dict[tuple[str, str, str], ModelUsage] = {}
    cost_by_day: dict[str, list[float]] = {}
    tokens_by_day: dict[str, list[int]] = {}
    by_day = []
    for row in rows:
        key = (row["model"], row["kind"], row["backend"])
        usage = totals.setdefault(
            key, ModelUsage(*key, calls=0, input_tokens=0, output_tokens=0, cost_usd=Decimal(0), failures=0)
        )
        usage.calls += row["calls"]
        usage.input_tokens += row["input_tokens"] or 0
        usage.output_tokens += row["output_tokens"] or 0
        usage.cost_usd += row["cost"] or Decimal(0)
        usage.failures += row["failures"]
        index = days.index(row["day"])
        cost_by_day.setdefault(row["model"], [0.0] * len(days))[index] += float(row["cost"] or 0)
        tokens_by_day.setdefault(row["model"], [0] * len(days))[index] += (row["input_tokens"] or 0) + (
            row["output_tokens"] or 0
        )
        by_day.append(
            (row["day"], row["model"], row["calls"], row["input_tokens"] or 0, row["output_tokens"] or 0, row["cost"])
        )
    failures = _series(period, [kind for kind, _ in ModelCall.Kind.choices])
    failed = _bucketed(calls.filter(ok=False), period).values("bucket", "kind").annotate(n=Count("id")).order_by()
    for row in failed:
        failures.add(row["kind"], row["bucket"], row["n"])
    per_model = sorted(totals.values(), key=lambda u: (-u.cost_usd, -(u.input_tokens + u.output_tokens), u.model))
    return Costs(
        days=days,
        per_model=per_model,
        cost_by_day=cost_by_day,
        tokens_by_day=tokens_by_day,
        by_day=by_day,
        failures=failures,
    )


@dataclass
class Failures:
    """The latest things that went wrong in the period, each linkable."""

    traces: list[SearchTrace]
    model_calls: list[ModelCall]
    documents: list[Document]


def dashboard_failures(*, period: Period, owner_id: int | None = None) -> Failures:
    traces = (
        _in_period(SearchTrace.objects.exclude(outcome=SearchTrace.Outcome.OK), period, owner_id)
        .select_related("owner", "session")
        .only("id", "kind", "query", "outcome", "error", "created_at", "owner__username", "session__title")
        .order_by("-created_at")[:LATEST_FAILURES]
    )
    calls = (
        _in_period(ModelCall.objects.filter(ok=False), period, owner_id)
        .select_related("owner")
        .order_by("-created_at")[:LATEST_FAILURES]
    )
    documents = (
        _in_period(Document.objects.filter(status=Document.Status.FAILED), period, owner_id, "updated_at")
        .select_related("owner")
        .only("id", "title", "filename", "error", "updated_at", "owner__username")
        .order_by("-updated_at")[:LATEST_FAILURES]
    )
    return Failures(traces=list(traces), model_calls=list(calls), documents=list(documents))


# --- Ingestion ---------------------------------------------------------------------------------------


@dataclass
class Ingestion:
    by_status: dict[str, int]
    indexed: Series  # documents ready, and their nodes, per bucket
    failed: Series
    kept_in_database: int  # jobs waiting in PostgreSQL for the broker to take them
    kept_oldest: datetime | None


def dashboard_ingestion(*, period: Period, owner_id: int | None = None) -> Ingestion:
    documents = Document.objects.all() if owner_id is None else Document.objects.filter(owner_id=owner_id)
    by_status = {status: 0 for status, _ in Document.Status.choices}
    for row in documents.values("status").annotate(n=Count("id")).order_by():
        by_status[row["status"]] = row["n"]
    indexed = _series(period, ["documents", "nodes"])
    rows = (
        _bucketed(documents.filter(indexed_at__gte=period.start, status=Document.Status.READY), period, "indexed_at")
        .values("bucket")
        .annotate(n=Count("id"), nodes=Sum("node_count"))
        .order_by()
    )
    for row in rows:
        indexed.add("documents", row["bucket"], row["n"])
        indexed.add("nodes", row["bucket"], row["nodes"] or 0)
    failed = _series(period, ["documents"])
    rows = (
        _bucketed(documents.filter(updated_at__gte=period.start, status=Document.Status.FAILED), period, "updated_at")
        .values("bucket")
        .annotate(n=Count("id"))
        .order_by()
    )
    for row in rows:
        failed.add("documents", row["bucket"], row["n"])
    kept = QueuedTask.objects.aggregate(n=Count("id"), oldest=Min("created_at"))
    return Ingestion(
        by_status=by_status, indexed=indexed, failed=failed, kept_in_database=kept["n"], kept_oldest=kept["oldest"]
    )


# --- Storage per user --------------------------------------------------------------------------------


STORAGE_COLUMNS = (
    "messages",
    "message_vectors",
    "documents",
    "bytes",
    "chunks",
    "node_vectors",
    "archives",
    "memories",
)


@dataclass
class Storage:
    rows: list[dict[str, Any]]  # per user, most messages first: username, user_id and STORAGE_COLUMNS
    totals: dict[str, int]
    users: int
    computed_at: datetime = field(default_factory=timezone.now)


def _per_owner(queryset: QuerySet, owner_id: int | None, **aggregates) -> dict[int, dict[str, int]]:
    if owner_id is not None:
        queryset = queryset.filter(owner_id=owner_id)
    return {row.pop("owner_id"): row for row in queryset.values("owner_id").annotate(**aggregates).order_by()}


def dashboard_storage(*, owner_id: int | None = None) -> Storage:
    """What each user keeps: messages and their vectors, documents (count and bytes), chunks and node
    vectors, archives and current memories. Totals are over every user; rows are the top users."""
    vectors = Count("id", filter=~Q(embedding_model=""))
    parts = [
        _per_owner(Message.objects.all(), owner_id, messages=Count("id"), message_vectors=vectors),
        _per_owner(Document.objects.all(), owner_id, documents=Count("id"), bytes=Sum("size_bytes")),
        _per_owner(
            DocumentNode.objects.all(), owner_id, chunks=Count("id", filter=Q(kind="chunk")), node_vectors=vectors
        ),
        _per_owner(Archive.objects.all(), owner_id, archives=Count("id")),
        _per_owner(Memory.objects.filter(superseded_by__isnull=True), owner_id, memories=Count("id")),
    ]
    per_user: dict[int, dict[str, int]] = defaultdict(lambda: dict.fromkeys(STORAGE_COLUMNS, 0))
    for part in parts:
        for user_id, values in part.items():
            per_user[user_id].update({key: value or 0 for key, value in values.items()})
    totals = {column: sum(row[column] for row in per_user.values()) for column in STORAGE_COLUMNS}
    top = sorted(per_user.items(), key=lambda item: (-item[1]["messages"], -item[1]["bytes"], item[0]))
    top = top[:STORAGE_TOP_USERS]
    names = dict(get_user_model().objects.filter(id__in=[user_id for user_id, _ in top]).values_list("id", "username"))
    rows = [{"user_id": user_id, "username": names.get(user_id, f"#{user_id}"), **values} for user_id, values in top]
    return Storage(rows=rows, totals=totals, users=len(per_user))


# --- One trace, readable ----------------------------------------------------------------------------


@dataclass
class NodeInfo:
    """What a document node URI points to, for a trace's tables."""

    title: str
    section: str
    document: str
    doc_id: str | None
    kind: str


@dataclass
class TraceView:
    trace: SearchTrace
    waterfall: list[dict[str, Any]]  # {stage, label, ms, offset_ms}, in order
    stages: list[dict[str, Any]]  # the stages with their candidates resolved: {"stage", "ms", "tables", ...}
    nodes: dict[str, NodeInfo]
    memories: dict[int, Memory]
    messages: dict[int, Message]
    total_ms: float


def _uris_in(value: Any) -> set[str]:
    """Every string that looks like a viking:// URI, anywhere in a trace's JSON."""
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            if item.startswith("viking://"):
                found.add(item)
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return found


def trace_detail(*, trace_id: uuid.UUID | str) -> TraceView:
    """One trace with the URIs it mentions resolved to titles and sections (a fixed handful of
    queries, however many candidates it lists). Raises SearchTrace.DoesNotExist."""
    trace = SearchTrace.objects.select_related("owner", "session").get(pk=trace_id)
    uris = _uris_in([trace.stages, trace.results, trace.plan])
    memory_ids = {memory_id for memory_id in map(memory_id_of, uris) if memory_id is not None}
    message_ids = {ref[1] for ref in map(message_ref_of, uris) if ref is not None}
    nodes = _nodes_named(uris)
    memories = {m.id: m for m in Memory.objects.filter(id__in=memory_ids).only("id", "category", "key", "content")}
    messages = {
        m.id: m
        for m in Message.objects.filter(id__in=message_ids).only(
            "id", "session_id", "seq", "role", "content", "created_at"
        )
    }
    waterfall, offset = _waterfall(trace)
    total = max([trace.total_ms, offset, *(float(v) for v in trace.timings.values())])
    return TraceView(
        trace=trace,
        waterfall=waterfall,
        stages=trace.stages,
        nodes=nodes,
        memories=memories,
        messages=messages,
        total_ms=total,
    )


def _nodes_named(uris: set[str]) -> dict[str, NodeInfo]:
    """The document nodes among ``uris`` with their titles, sections and documents (two queries)."""
    node_uris = {uri for uri in uris if parse_resource_uri(uri) is not None}
    # A chunk's section is its parent: read with it, in the same query.
    wanted = node_uris | {uri.rsplit("/", 1)[0] for uri in node_uris}
    rows = {
        node["uri"]: node
        for node in DocumentNode.objects.filter(uri__in=wanted).values(
            "uri", "title", "kind", "parent_uri", "document_id"
        )
    }
    doc_ids = {row["document_id"] for row in rows.values()}
    documents = {
        doc_id: title or filename
        for doc_id, title, filename in Document.objects.filter(id__in=doc_ids).values_list("id", "title", "filename")
    }
    nodes = {}
    for uri, row in rows.items():
        parent = rows.get(row["parent_uri"])
        section = parent["title"] if parent and parent["kind"] == "section" else ""
        nodes[uri] = NodeInfo(
            title=row["title"] or documents.get(row["document_id"], ""),
            section=section if row["kind"] == "chunk" else (row["title"] if row["kind"] == "section" else ""),
            document=documents.get(row["document_id"], ""),
            doc_id=str(row["document_id"]),
            kind=row["kind"],
        )
    return nodes


def _waterfall(trace: SearchTrace) -> tuple[list[dict[str, Any]], float]:
    """The trace's stages one after the other, then the turn's own timings from its start; and where the
    stages end."""
    offset = 0.0
    waterfall = []
    for stage in trace.stages:
        ms = float(stage.get("ms") or 0.0)
        waterfall.append(
            {
                "stage": stage.get("stage", ""),
                "label": stage_label(stage.get("stage", "")),
                "ms": ms,
                "offset_ms": offset,
            }
        )
        offset += ms
    for name in ("first_token", "turn"):
        if name in trace.timings:
            waterfall.append({"stage": name, "label": STAGE_LABELS[name], "ms": trace.timings[name], "offset_ms": 0.0})
    return waterfall, offset


# --- One conversation, for operators --------------------------------------------------------------


SESSION_MESSAGES_PAGE = 200
SESSION_TRACES = 50
# A conversation's page shows at most its latest this many archives, and this many memories drawn from it.
SESSION_ARCHIVES = 50
SESSION_MEMORIES = 200
SESSION_CALLS = 50


@dataclass
class SessionView:
    session: ChatSession
    messages: list[Message]
    message_count: int
    page: int
    pages: int
    archives: list[Archive]  # the latest SESSION_ARCHIVES, oldest first
    archives_more: bool
    memories: list[Memory]
    memories_more: bool
    traces: list[SearchTrace]
    trace_count: int
    calls: list[ModelCall]
    cost: dict[str, Any]  # calls, input_tokens, output_tokens, cost_usd, failures
    metadata: ShownMetadata  # the session's; each message's is its ``shown``


def session_detail(*, session_id: uuid.UUID | str, page: int = 1) -> SessionView:
    """One conversation as an operator reads it: its messages in order (a page at a time), archives,
    rolling summary, memories, traces and model calls with their cost. Raises ChatSession.DoesNotExist."""
    sessions = with_metadata_text(ChatSession.objects.select_related("owner"))
    session = sessions.annotate(message_total=Count("messages")).get(pk=session_id)
    metadata_loaded([session])
    count = session.message_total
    pages = max(1, -(-count // SESSION_MESSAGES_PAGE))
    page = min(max(1, page), pages)
    start = (page - 1) * SESSION_MESSAGES_PAGE
    messages = metadata_loaded(
        with_metadata_text(Message.objects.filter(session=session))
        .defer("embedding", "search_vector")
        .annotate(vectorised=~Q(embedding_model=""))
        .order_by("seq")[start : start + SESSION_MESSAGES_PAGE]
    )
    for message in messages:
        message.shown = shown_metadata(message.metadata)
    # One row past each limit says whether there are more, without counting them all.
    archives = list(
        Archive.objects.filter(session=session).defer("embedding").order_by("-index")[: SESSION_ARCHIVES + 1]
    )
    memories = list(
        Memory.objects.filter(
            Q(source_archive__session=session) | Q(source_messages__session=session), owner_id=session.owner_id
        )
        .defer("embedding", "search_vector")
        .distinct()
        .order_by("category", "key")[: SESSION_MEMORIES + 1]
    )
    traces = SearchTrace.objects.filter(session=session)
    calls = ModelCall.objects.filter(session_id=session.pk)
    cost = calls.aggregate(
        calls=Count("id"),
        input_tokens=Sum("input_tokens"),
        output_tokens=Sum("output_tokens"),
        cost_usd=Sum("cost_usd"),
        failures=Count("id", filter=Q(ok=False)),
    )
    return SessionView(
        session=session,
        messages=messages,
        message_count=count,
        page=page,
        pages=pages,
        archives=archives[:SESSION_ARCHIVES][::-1],
        archives_more=len(archives) > SESSION_ARCHIVES,
        memories=memories[:SESSION_MEMORIES],
        memories_more=len(memories) > SESSION_MEMORIES,
        traces=list(
            traces.only("id", "kind", "query", "outcome", "result_count", "total_ms", "timings", "created_at").order_by(
                "-created_at"
            )[:SESSION_TRACES]
        ),
        trace_count=traces.count(),
        calls=list(calls.order_by("-created_at")[:SESSION_CALLS]),
        cost={key: value or 0 for key, value in cost.items()},
        metadata=shown_metadata(session.metadata),
    )


def users_with_activity(*, period: Period, limit: int = 200) -> list[tuple[int, str]]:
    """The users who searched or chatted in the period (most active first), for the user filter."""
    rows = (
        SearchTrace.objects.filter(created_at__gte=period.start)
        .values("owner_id", "owner__username")
        .annotate(n=Count("id"))
        .order_by("-n")[:limit]
    )
    return [(row["owner_id"], row["owner__username"]) for row in rows]
