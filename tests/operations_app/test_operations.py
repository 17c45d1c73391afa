"""The operators' side: the dashboard's numbers against rows made here (exact counts and percentiles),
the readable trace and conversation pages, and a fixed number of queries on each page whatever the
amount of data."""

from __future__ import annotations

from datetime import timedelta
from decimal import Decimal

import pytest
from django.contrib.auth.models import Permission
from django.test import Client
from django.utils import timezone
from django.utils.html import escape

from documents_app.models import Document
from foundation.models import ModelCall
from operations_app import selectors
from retrieval_app.models import SearchTrace
from tests.factories import (
    ArchiveFactory,
    ChatSessionFactory,
    DocumentFactory,
    MemoryFactory,
    MessageFactory,
    SearchTraceFactory,
    UserFactory,
)

pytestmark = pytest.mark.django_db


def percentile(values: list[float], fraction: float) -> float:
    """Linear interpolation between the closest ranks, as PostgreSQL's percentile_cont."""
    ordered = sorted(values)
    position = fraction * (len(ordered) - 1)
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


@pytest.fixture
def now():
    # Half past the hour, so that "an hour ago" and "two hours ago" fall in buckets of their own.
    return timezone.now().replace(minute=30, second=0, microsecond=0) - timedelta(hours=1)


def _trace(owner, *, kind="chat", at, timings=None, outcome="ok", **fields) -> SearchTrace:
    return SearchTraceFactory(owner=owner, kind=kind, created_at=at, timings=timings or {}, outcome=outcome, **fields)


@pytest.fixture
def staff_client():
    client = Client()
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    return client


def test_requests_are_counted_per_hour_and_kind_for_everyone_or_one_user(user, now):
    other = UserFactory()
    for hours_ago, kind in [(0, "chat"), (0, "chat"), (1, "search"), (1, "chat"), (2, "find"), (3, "recall")]:
        _trace(user, kind=kind, at=now - timedelta(hours=hours_ago))
    _trace(other, kind="chat", at=now)
    _trace(user, kind="chat", at=now - timedelta(hours=30))  # before the period
    period = selectors.period_of("24h", now=now + timedelta(minutes=10))

    everyone = selectors.dashboard_activity(period=period)
    assert everyone.totals == {"find": 1, "search": 1, "chat": 4, "recall": 1}
    mine = selectors.dashboard_activity(period=period, owner_id=user.id)
    assert mine.totals == {"find": 1, "search": 1, "chat": 3, "recall": 1}
    buckets = period.buckets()
    assert len(buckets) == 24 and buckets[-1] <= now < buckets[-1] + timedelta(hours=1)
    assert mine.requests.series["chat"][-1] == 2 and mine.requests.series["chat"][-2] == 1
    assert mine.requests.series["search"][-2] == 1 and mine.requests.series["find"][-3] == 1


def test_latency_percentiles_are_exact_per_stage_and_per_kind(user, now):
    dense = [4.0, 9.0, 12.5, 30.0, 41.0]
    turns = [800.0, 1200.0, 950.0]
    for index, ms in enumerate(dense):
        kind = "chat" if index < 3 else "find"
        timings = {"dense": ms, "search": ms * 2}
        if kind == "chat":
            timings |= {"turn": turns[index], "first_token": turns[index] / 2}
        _trace(user, kind=kind, at=now - timedelta(minutes=index), timings=timings)
    period = selectors.period_of("24h", now=now + timedelta(minutes=10))
    latency = selectors.dashboard_latency(period=period, traces=5)
    assert latency.sampled_from is None and latency.traces == 5  # few enough to be read whole
    stages = {s.stage: s for s in latency.stages}
    assert list(stages) == ["dense", "search", "first_token", "turn"]  # in the order a turn runs
    assert stages["dense"].count == 5
    assert stages["dense"].p50 == round(percentile(dense, 0.5), 1) == 12.5
    assert stages["dense"].p95 == round(percentile(dense, 0.95), 1) == 38.8
    assert stages["dense"].max == 41.0
    assert stages["dense"].by_kind["chat"] == (
        3,
        round(percentile(dense[:3], 0.5), 1),
        round(percentile(dense[:3], 0.95), 1),
    )
    assert stages["dense"].by_kind["find"] == (2, 35.5, round(percentile(dense[3:], 0.95), 1))
    assert stages["turn"].p95 == round(percentile(turns, 0.95), 1) == 1175.0
    over_time = selectors.dashboard_turn_latency(period=period)
    assert over_time.series["whole turn p50"][-1] == 950.0 and over_time.series["whole turn p95"][-1] == 1175.0


def test_tokens_and_cost_are_summed_per_model_per_day(user, now):
    def call(model, day, tokens_in, tokens_out, cost, ok=True, kind="generation"):
        ModelCall.objects.create(
            kind=kind,
            purpose="chat",
            backend="litellm",
            model=model,
            owner=user,
            input_tokens=tokens_in,
            output_tokens=tokens_out,
            cost_usd=Decimal(cost),
            ok=ok,
            error="" if ok else "timeout",
            created_at=now - timedelta(days=day),
        )

    call("gpt-4o-mini", 0, 100, 20, "0.000150")
    call("gpt-4o-mini", 0, 300, 40, "0.000450")
    call("gpt-4o-mini", 2, 50, 0, "0.000050", ok=False)
    call("text-embedding-3-small", 1, 1000, 0, "0.000020", kind="embedding")
    call("gpt-4o-mini", 9, 5000, 5000, "1.0")  # before the 7 days
    period = selectors.period_of("7d", now=now)
    costs = selectors.dashboard_costs(period=period)
    usage = {u.model: u for u in costs.per_model}
    assert (usage["gpt-4o-mini"].calls, usage["gpt-4o-mini"].failures) == (3, 1)
    assert (usage["gpt-4o-mini"].input_tokens, usage["gpt-4o-mini"].output_tokens) == (450, 60)
    assert usage["gpt-4o-mini"].cost_usd == Decimal("0.000650")
    assert costs.total_cost == Decimal("0.000670") and costs.total_tokens == 1510
    assert [u.model for u in costs.per_model] == ["gpt-4o-mini", "text-embedding-3-small"]  # costliest first
    assert costs.cost_by_day["gpt-4o-mini"][-1] == pytest.approx(0.0006)
    assert costs.tokens_by_day["text-embedding-3-small"][-2] == 1000
    assert costs.failures.total("generation") == 1 and costs.failures.total("embedding") == 0


def test_failures_are_listed_newest_first_and_counted_with_fallbacks(user, now):
    _trace(user, at=now - timedelta(hours=2), outcome="retrieval_failed", error="Search failed: boom")
    _trace(user, at=now - timedelta(hours=1), outcome="generation_failed", error="the model timed out")
    _trace(user, at=now, rewrite_decision={"rewritten": False, "error": "rewrite failed (Timeout)"})
    _trace(user, at=now)
    ModelCall.objects.create(
        kind="embedding",
        purpose="recall",
        backend="litellm",
        model="m",
        owner=user,
        ok=False,
        error="connection refused",
        created_at=now,
    )
    DocumentFactory(owner=user, status=Document.Status.FAILED, error="The PDF has no text layer.")
    period = selectors.period_of("24h", now=now + timedelta(minutes=10))
    activity = selectors.dashboard_activity(period=period)
    assert activity.failures.total("retrieval_failed") == 1
    assert activity.failures.total("generation_failed") == 1
    assert activity.failures.total(selectors.REWRITE_FALLBACK) == 1
    failures = selectors.dashboard_failures(period=period)
    assert [t.outcome for t in failures.traces] == ["generation_failed", "retrieval_failed"]
    assert [c.error for c in failures.model_calls] == ["connection refused"]
    assert [d.error for d in failures.documents] == ["The PDF has no text layer."]


def test_ingestion_and_storage_are_counted_per_user(user, now):
    other = UserFactory()
    for status in ["ready", "ready", "failed", "pending", "indexing"]:
        DocumentFactory(
            owner=user,
            status=status,
            size_bytes=1000,
            node_count=5 if status == "ready" else 0,
            indexed_at=now if status == "ready" else None,
        )
    DocumentFactory(owner=other, status="ready", size_bytes=10, indexed_at=now - timedelta(days=3))
    Document.objects.filter(status="failed").update(updated_at=now)
    session = ChatSessionFactory(owner=user)
    for _ in range(3):
        MessageFactory(session=session)
    MessageFactory(session=session, embedding=[0.1] * 384, embedding_model="test-model")
    MessageFactory(session=ChatSessionFactory(owner=other))
    ArchiveFactory(session=session)
    MemoryFactory(owner=user)
    period = selectors.period_of("24h", now=now + timedelta(minutes=10))

    ingestion = selectors.dashboard_ingestion(period=period, owner_id=user.id)
    assert ingestion.by_status == {"pending": 1, "indexing": 1, "ready": 2, "failed": 1}
    assert ingestion.indexed.total("documents") == 2 and ingestion.indexed.total("nodes") == 10
    assert ingestion.failed.total("documents") == 1

    storage = selectors.dashboard_storage()
    assert storage.users == 2
    mine = next(row for row in storage.rows if row["user_id"] == user.id)
    assert (mine["messages"], mine["message_vectors"], mine["documents"], mine["bytes"]) == (4, 1, 5, 5000)
    assert (mine["archives"], mine["memories"]) == (1, 1)
    assert storage.totals["messages"] == 5 and storage.totals["documents"] == 6
    assert storage.rows[0]["username"] == user.username  # the user who keeps most comes first


def _dashboard_queries(client, django_assert_max_num_queries) -> int:
    client.get("/admin/ops/?period=7d")  # the workers' answer is cached after the first load
    with django_assert_max_num_queries(60) as captured:
        response = client.get("/admin/ops/?period=7d")
    assert response.status_code == 200
    return len(captured)


def test_the_dashboard_costs_the_same_queries_whatever_the_data(staff_client, user, now, django_assert_max_num_queries):
    _trace(user, at=now, timings={"dense": 3.0, "turn": 900.0})
    MessageFactory(session=ChatSessionFactory(owner=user))
    few = _dashboard_queries(staff_client, django_assert_max_num_queries)
    for index in range(30):
        owner = UserFactory()
        _trace(
            owner, at=now - timedelta(hours=index), timings={"dense": 3.0, "turn": 900.0}, outcome="retrieval_failed"
        )
        MessageFactory(session=ChatSessionFactory(owner=owner))
        DocumentFactory(owner=owner, status="failed", error="unreadable")
        ModelCall.objects.create(
            kind="generation", purpose="chat", backend="b", model=f"m{index}", owner=owner, ok=False
        )
    assert _dashboard_queries(staff_client, django_assert_max_num_queries) == few


def test_the_dashboard_page_shows_its_numbers_and_says_what_is_wrong(staff_client, user, now):
    _trace(user, at=now, timings={"dense": 3.0, "turn": 900.0, "first_token": 400.0})
    _trace(user, at=now, outcome="retrieval_failed", error="Search failed: the index is on fire")
    response = staff_client.get(f"/admin/ops/?period=24h&user={user.username}")
    page = response.content.decode()
    for words in ("How busy", "How fast", "How costly", "What failed", "Ingestion", "Storage", "Workers and queues"):
        assert words in page
    assert "the index is on fire" in page and "dense retriever (pgvector)" in page
    assert "<svg" in page and "<title>" in page  # charts with their numbers on hover
    # No worker consumes the test broker's queues: said in words.
    assert "no worker is consuming the bulk queue" in page.lower()
    assert "There is no user called" in staff_client.get("/admin/ops/?user=nobody-here").content.decode()


def test_a_trace_reads_as_stages_with_titles_and_the_raw_json_folded(
    staff_client, auth_client, library, django_assert_max_num_queries
):
    session = auth_client.post("/api/sessions", {"title": "kettle"}, format="json").json()["session_id"]
    auth_client.post(
        "/api/ai/chat", {"message": "How often should I descale the kettle?", "session_id": session}, format="json"
    )
    auth_client.post(
        "/api/ai/chat", {"message": "and what does its warranty cover?", "session_id": session}, format="json"
    )
    trace = SearchTrace.objects.filter(kind="chat").latest("created_at")
    assert trace.rewritten_query  # the follow-up was resolved
    staff_client.get(f"/admin/ops/traces/{trace.id}/")
    # The session and user of the request, the trace, then one query per kind of thing its candidates
    # point to (nodes with their sections, documents, and memories and turns when there are any).
    with django_assert_max_num_queries(7):
        response = staff_client.get(f"/admin/ops/traces/{trace.id}/")
    page = response.content.decode()
    assert escape(trace.query) in page and escape(trace.rewritten_query) in page
    assert "Where the time went" in page and "first token" in page and "whole turn" in page
    # Every stage by the name an operator reads, not the trace's own key.
    assert "query embedding" in page and "token budget" in page and "prompt assembly" in page
    assert ">token_budget<" not in page and "Prompt_budget" not in page
    assert "Aurora Kettle Guide" in page and "Warranty" in page  # candidates by document and section title
    assert '<details><summary id="h-raw">' in page
    assert staff_client.get(f"/admin/ops/traces/{trace.session_id}/").status_code == 404


def test_a_conversation_page_shows_messages_archives_memories_traces_and_cost(
    staff_client, auth_client, library, hosted_llm
):
    hosted_llm.reply = lambda messages: "Every four weeks."
    answer = auth_client.post(
        "/api/ai/chat", {"message": "My name is Dana. How often should I descale the kettle?"}, format="json"
    ).json()
    session_id = answer["session_id"]
    auth_client.post(f"/api/sessions/{session_id}/commit", {}, format="json")
    response = staff_client.get(f"/admin/ops/sessions/{session_id}/")
    page = response.content.decode()
    assert "Every four weeks." in page and "archive_001" in page and "What it cost" in page
    assert "chat" in page and "openai/test-chat" in page
    assert staff_client.get(f"/admin/ops/sessions/{SearchTrace.objects.first().id}/").status_code == 404


def test_a_conversation_page_costs_the_same_queries_however_long_it_is(staff_client, user, django_assert_num_queries):
    session = ChatSessionFactory(owner=user)
    MessageFactory(session=session)
    _trace(user, at=timezone.now(), session=session)
    staff_client.get(f"/admin/ops/sessions/{session.id}/")
    with django_assert_num_queries(10):
        staff_client.get(f"/admin/ops/sessions/{session.id}/")
    for _ in range(40):
        MessageFactory(session=session, metadata={"trace_id": str(_trace(user, at=timezone.now(), session=session).id)})
    ArchiveFactory(session=session)
    MemoryFactory(owner=user)
    with django_assert_num_queries(10):
        response = staff_client.get(f"/admin/ops/sessions/{session.id}/")
    assert response.status_code == 200


def test_a_conversation_page_shows_its_latest_archives_however_many_there_are(staff_client, user):
    session = ChatSessionFactory(owner=user)
    for index in range(1, selectors.SESSION_ARCHIVES + 2):
        ArchiveFactory(session=session, index=index, abstract=f"Archive number {index} of many.")
    page = staff_client.get(f"/admin/ops/sessions/{session.id}/").content.decode()
    assert f"Archives (the latest {selectors.SESSION_ARCHIVES})" in page
    assert "Archive number 1 of many." not in page
    shown = [f"Archive number {n} of many." for n in (2, selectors.SESSION_ARCHIVES + 1)]
    assert all(text in page for text in shown) and page.index(shown[0]) < page.index(shown[1])


def test_operators_pages_need_staff_with_the_permission_to_view_what_they_show(user, now):
    trace = _trace(user, at=now, session=ChatSessionFactory(owner=user))
    paths = ["/admin/ops/", f"/admin/ops/traces/{trace.id}/", f"/admin/ops/sessions/{trace.session_id}/"]
    anonymous = Client()
    assert all(anonymous.get(path).status_code == 302 for path in paths)  # to the admin's sign-in
    staff = UserFactory(is_staff=True)
    client = Client()
    client.force_login(staff)
    assert [client.get(path).status_code for path in paths] == [403, 403, 403]
    for codename in ("view_searchtrace", "view_modelcall", "view_chatsession", "view_message"):
        staff.user_permissions.add(Permission.objects.get(codename=codename))
    assert [client.get(path).status_code for path in paths] == [200, 200, 200]


def test_a_busy_periods_percentiles_come_from_a_uniform_sample_that_a_reload_keeps(user, now, monkeypatch):
    monkeypatch.setattr(selectors, "LATENCY_SAMPLE", 50)
    SearchTrace.objects.bulk_create(
        SearchTrace(owner=user, kind="find", query="q", created_at=now, timings={"dense": float(i), "search": 10.0})
        for i in range(400)
    )
    period = selectors.period_of("24h", now=now + timedelta(minutes=10))
    first = selectors.dashboard_latency(period=period, traces=400)
    assert first.sampled_from == 400 and 20 < first.traces < 100
    again = selectors.dashboard_latency(period=period, traces=400)
    assert [(s.stage, s.count, s.p50, s.p95) for s in again.stages] == [
        (s.stage, s.count, s.p50, s.p95) for s in first.stages
    ]
    # A uniform sample of 0..399: its median near the true one (199.5).
    assert 120 < {s.stage: s for s in first.stages}["dense"].p50 < 280


def test_a_burst_of_dashboard_loads_waits_its_turn_and_never_holds_the_pool(staff_client, monkeypatch):
    """Two dashboards are drawn at once per web process; another waits (holding no database connection)
    and, if the wait runs out, is told to reload rather than take a connection every person needs."""
    from operations_app import views

    monkeypatch.setattr(views, "DASHBOARD_WAIT_S", 0.2)
    for _ in range(views.DASHBOARD_AT_ONCE):  # as if two were being drawn
        views._dashboards.acquire()
    try:
        busy = staff_client.get("/admin/ops/")
    finally:
        for _ in range(views.DASHBOARD_AT_ONCE):
            views._dashboards.release()
    assert busy.status_code == 503 and busy["Retry-After"] == "5"
    assert staff_client.get("/admin/ops/").status_code == 200
