"""A request's database connections go back to the pool however the request ends (Daphne cancelling it
mid-view included), a request that keeps its connection too long is stopped with a 503, a connection
whose thread died is reclaimed, and the health check says when this process cannot get a connection.

The request is driven through the product's own ASGI handler here, with a view that waits on the test's
signal; tests/outage/test_connections.py does the same through a real Daphne."""

from __future__ import annotations

import asyncio
import json
import threading
import time
import uuid

import pytest
from django.contrib.auth import get_user_model
from django.db import connection, connections, transaction
from django.http import HttpRequest, JsonResponse
from django.urls import path
from psycopg.pq import TransactionStatus
from rest_framework.test import APIClient

from config.handler import ConnectionSafeASGIHandler
from foundation import connections as pool_tracking
from foundation import health
from foundation.api import DeepHealthThrottle
from foundation.connections import release_database_connections

pytestmark = pytest.mark.django_db(transaction=True)

view_started = threading.Event()
view_may_finish = threading.Event()
view_finished = threading.Event()
view_errors: list[BaseException] = []


def waiting_view(request: HttpRequest) -> JsonResponse:
    """Uses the database, then waits for the test (as a slow import or upload would work on)."""
    users = get_user_model().objects.count()
    view_started.set()
    view_may_finish.wait(timeout=10)
    try:
        get_user_model().objects.count()
    except Exception as exc:
        view_errors.append(exc)
        raise
    finally:
        view_finished.set()
    return JsonResponse({"users": users})


def releasing_view(request: HttpRequest) -> JsonResponse:
    """Hands its connection back while it waits, as a chat turn does while a model answers."""
    get_user_model().objects.count()
    release_database_connections()
    view_may_finish.wait(timeout=10)
    return JsonResponse({"users": get_user_model().objects.count()})


def statement_view(request: HttpRequest) -> JsonResponse:
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SET LOCAL statement_timeout = '100ms'")
        cursor.execute("SELECT pg_sleep(2)")
    return JsonResponse({})


urlpatterns = [
    path("api/waiting", waiting_view),
    path("api/releasing", releasing_view),
    path("api/statement", statement_view),
]


@pytest.fixture(autouse=True)
def tracked():
    pool_tracking.install()
    view_started.clear()
    view_may_finish.clear()
    view_finished.clear()
    view_errors.clear()
    yield
    view_may_finish.set()


def _pool():
    return connections["default"].pool


def _scope(path_: str) -> dict:
    return {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": path_,
        "raw_path": path_.encode(),
        "query_string": b"",
        "root_path": "",
        "headers": [(b"host", b"testserver")],
        "client": ("127.0.0.1", 40000),
        "server": ("testserver", 80),
    }


async def _call(path_: str, *, disconnect: asyncio.Event | None = None) -> list[dict]:
    """One request through the handler; ``disconnect`` set means the client leaves."""
    sent: list[dict] = []
    body_read = False

    async def receive():
        nonlocal body_read
        if not body_read:
            body_read = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await (disconnect or asyncio.Event()).wait()
        return {"type": "http.disconnect"}

    async def send(message):
        sent.append(message)

    await ConnectionSafeASGIHandler()(_scope(path_), receive, send)
    return sent


def _wait(condition, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "did not happen in time"
        time.sleep(0.05)


def _settled_pool() -> None:
    """Opens the pool and waits for its first connections: until then they count as taken."""
    connection.ensure_connection()
    _pool().wait(timeout=10)


def _in_use() -> int:
    stats = _pool().get_stats()
    return stats["pool_size"] - stats["pool_available"]


async def _end_leftover_tasks() -> None:
    leftovers = [task for task in asyncio.all_tasks() if task is not asyncio.current_task()]
    for task in leftovers:
        task.cancel()
    await asyncio.gather(*leftovers, return_exceptions=True)


@pytest.fixture
def server_loop():
    """An event loop that keeps running, as Daphne's does: a request it cancels is not waited for at the
    loop's end, so the view may still be running (asyncio.run would wait for the request's leftover tasks)."""
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    yield loop
    view_may_finish.set()
    asyncio.run_coroutine_threadsafe(_end_leftover_tasks(), loop).result(timeout=15)
    loop.call_soon_threadsafe(loop.stop)
    thread.join(timeout=10)
    loop.close()


@pytest.mark.urls(__name__)
def test_a_request_cancelled_mid_view_hands_its_connection_back_once_the_view_returns(server_loop):
    _settled_pool()  # this test's own connection stays out throughout
    before = _in_use()

    def in_loop(coroutine):
        return asyncio.run_coroutine_threadsafe(coroutine, server_loop).result(timeout=10)

    async def start() -> asyncio.Task:
        return asyncio.ensure_future(_call("/api/waiting"))

    async def cancel(request: asyncio.Task) -> bool:
        request.cancel()  # what Daphne does after --application-close-timeout
        try:
            await request
        except asyncio.CancelledError:
            return True
        return False

    request = in_loop(start())
    _wait(view_started.is_set)
    assert in_loop(cancel(request)), "the request was cancelled"
    assert _in_use() == before + 1, "the view, still running, holds its connection"
    view_may_finish.set()
    _wait(view_finished.is_set)
    _wait(lambda: _in_use() == before)
    assert [type(error).__name__ for error in view_errors] == ["RequestStoppedError"], "nobody awaits its answer"


@pytest.mark.urls(__name__)
def test_a_request_whose_client_left_is_refused_its_next_query():
    _settled_pool()
    before = _in_use()

    async def client_leaves():
        gone = asyncio.Event()
        request = asyncio.ensure_future(_call("/api/waiting", disconnect=gone))
        while not view_started.is_set():
            await asyncio.sleep(0.02)
        gone.set()
        await asyncio.sleep(0.2)
        view_may_finish.set()
        await request

    asyncio.run(client_leaves())
    _wait(view_finished.is_set)
    _wait(lambda: _in_use() == before)
    assert [type(error).__name__ for error in view_errors] == ["RequestStoppedError"]


@pytest.mark.urls(__name__)
def test_a_request_keeping_its_connection_too_long_gets_a_503_timeout_and_hands_it_back(settings):
    settings.REQUEST_CONNECTION_TIMEOUT_S = 0.3
    _settled_pool()
    before = _in_use()
    threading.Timer(0.6, view_may_finish.set).start()
    sent = asyncio.run(_call("/api/waiting"))
    start, body = sent[0], json.loads(sent[1]["body"])
    assert start["status"] == 503
    assert body["error"]["code"] == "timeout"
    assert "database connection for longer than 0.3 s" in body["error"]["message"]
    _wait(lambda: _in_use() == before)


@pytest.mark.urls(__name__)
def test_a_long_request_that_hands_its_connection_back_while_it_waits_is_not_stopped(settings):
    settings.REQUEST_CONNECTION_TIMEOUT_S = 0.3
    threading.Timer(0.6, view_may_finish.set).start()
    sent = asyncio.run(_call("/api/releasing"))
    assert sent[0]["status"] == 200, sent


@pytest.mark.urls(__name__)
def test_a_statement_over_its_time_limit_is_a_503_timeout_not_a_database_outage():
    sent = asyncio.run(_call("/api/statement"))
    assert sent[0]["status"] == 503
    assert json.loads(sent[1]["body"])["error"]["code"] == "timeout"


def test_the_site_s_connections_have_statement_and_idle_transaction_limits(settings):
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT current_setting('statement_timeout'), current_setting('idle_in_transaction_session_timeout')"
        )
        statement, idle = cursor.fetchone()
    assert statement == f"{settings.DATABASE_STATEMENT_TIMEOUT_S:g}s"
    assert idle == f"{settings.DATABASE_IDLE_IN_TRANSACTION_TIMEOUT_S / 60:g}min"


def test_a_connection_whose_thread_died_holding_it_is_reclaimed():
    _settled_pool()
    before = _in_use()

    def leaks():
        get_user_model().objects.count()  # checks a connection out, never hands it back

    thread = threading.Thread(target=leaks)
    thread.start()
    thread.join()
    assert _in_use() == before + 1
    assert pool_tracking.reclaim_orphans() == 1
    assert _in_use() == before


def _finished_thread() -> threading.Thread:
    thread = threading.Thread(target=lambda: None)
    thread.start()
    thread.join()
    return thread


def _holding_thread(statement: str, *, until: threading.Event | None = None):
    """A thread that runs ``statement`` on its own connection (then waits for ``until``); returns the
    thread, what it holds once it has started (wrapper, psycopg connection), and what it read."""
    held: list = []
    read: list = []
    started = threading.Event()

    def run():
        wrapper = connections["default"]
        with wrapper.cursor() as cursor:
            held.extend([wrapper, wrapper.connection])
            started.set()
            cursor.execute(statement)
            read.append(cursor.fetchone())
        if until is not None:
            until.wait(timeout=10)
        connections.close_all()

    thread = threading.Thread(target=run)
    thread.start()
    assert started.wait(timeout=10)
    return thread, held, read


ADVISORY_KEY = 40417  # the lock the statement below waits for


def test_a_connection_a_statement_is_running_on_is_never_handed_back_as_an_orphan(caplog):
    """Should the record of who holds a connection ever name a thread that has ended while another uses
    it, the reclaimer must not pull it from under that user (the pool would close it mid-statement)."""
    _settled_pool()
    with connection.cursor() as cursor:  # the thread's statement waits for this lock until the test lets go
        cursor.execute("SELECT pg_advisory_lock(%s)", [ADVISORY_KEY])
    before = _in_use()
    try:
        thread, (wrapper, conn), read = _holding_thread("SELECT 1 FROM pg_advisory_lock(40417)")
        _wait(lambda: conn.info.transaction_status == TransactionStatus.ACTIVE)
        pool_tracking._held[id(conn)] = pool_tracking._Checkout(wrapper, conn, _finished_thread())
        assert pool_tracking.reclaim_orphans() == 0
    finally:
        with connection.cursor() as cursor:
            cursor.execute("SELECT pg_advisory_unlock(%s)", [ADVISORY_KEY])
    thread.join(timeout=10)
    assert read == [(1,)], "the statement ran to its end on its connection"
    assert _in_use() == before, "and its thread handed the connection back itself"
    assert "a statement is running on it" in caplog.text


def test_a_connection_handed_out_while_another_thread_holds_it_is_reported(caplog, monkeypatch):
    monkeypatch.setattr(pool_tracking, "SHARED_CHECK_AFTER_S", 0.05)
    _settled_pool()
    done = threading.Event()
    thread, (_, conn), _ = _holding_thread("SELECT 1", until=done)
    second = connections.create_connection("default")
    second.connection = conn  # what a pool handing the same connection out twice would do
    try:
        pool_tracking._on_connection_created(sender=type(second), connection=second)
        _wait(lambda: f"a database connection that thread {thread.name} still holds" in caplog.text)
    finally:
        second.connection = None  # not closed: the connection is the other thread's to hand back
        done.set()
        thread.join(timeout=10)


def test_a_connection_let_go_a_moment_after_another_thread_got_it_is_not_reported(caplog, monkeypatch):
    """Django hands a connection back before it lets go of it: a thread waiting for one may get it in
    between, which is no sharing."""
    monkeypatch.setattr(pool_tracking, "SHARED_CHECK_AFTER_S", 0.2)
    _settled_pool()
    done = threading.Event()
    thread, (_, conn), _ = _holding_thread("SELECT 1", until=done)
    second = connections.create_connection("default")
    second.connection = conn
    try:
        pool_tracking._on_connection_created(sender=type(second), connection=second)
        done.set()  # the first holder lets go at once
        thread.join(timeout=10)
        time.sleep(0.5)
        assert "still holds" not in caplog.text
    finally:
        second.connection = None


def test_a_connection_the_pool_took_back_meanwhile_is_let_go_not_handed_back_twice(caplog):
    _settled_pool()  # this test's own connection is out
    before = _in_use()
    taken = connection.connection
    taken._pool.putconn(taken)  # what a second hand-back by someone else does

    release_database_connections()  # no error: the thread lets it go
    assert connection.connection is None
    assert "taken back by the pool meanwhile" in caplog.text
    assert _in_use() == before - 1, "the pool holds it, once"
    assert get_user_model().objects.count() >= 0, "and the thread goes on with a connection of its own"


def test_a_connection_another_thread_was_given_meanwhile_is_let_go_not_taken_from_it(caplog, monkeypatch):
    monkeypatch.setattr(pool_tracking, "SHARED_CHECK_AFTER_S", 60)  # the report is another test's
    _settled_pool()  # this test's own connection is out
    taken = connection.connection
    other = connections.create_connection("default")
    other.connection = taken  # the pool gave it to another thread as well
    pool_tracking._on_connection_created(sender=type(other), connection=other)
    try:
        release_database_connections()
        assert connection.connection is None
        assert "taken back by the pool meanwhile" in caplog.text
        assert taken._pool is not None, "the other thread still has it: it was not handed back from here"
    finally:
        other.close()  # the other thread's to hand back


def test_health_says_when_this_process_cannot_get_a_connection_though_the_database_answers(settings):
    settings.DATABASE_CONNECTION_MAX_HOLD_S = 0.1
    release, holding = threading.Event(), threading.Semaphore(0)

    def hold():
        get_user_model().objects.count()
        holding.release()
        release.wait(timeout=10)
        connections.close_all()

    connection.close()
    holders = [threading.Thread(target=hold) for _ in range(_pool().max_size)]
    for thread in holders:
        thread.start()
    try:
        for _ in holders:
            assert holding.acquire(timeout=10)
        time.sleep(0.2)
        report = health.health_report()
        assert report["database"]["ok"] is True, "the health check asks the database on its own connection"
        assert report["connections"]["ok"] is False
        assert "cannot get a connection" in report["connections"]["error"]
    finally:
        release.set()
        for thread in holders:
            thread.join()
    assert health.health_report()["connections"]["ok"] is True


def test_anyone_but_staff_gets_the_workers_as_checked_a_moment_ago(settings):
    settings.HEALTH_DEEP_CACHE_S = 60
    health._deep_cache.clear()
    client = APIClient()
    started = time.monotonic()
    first = client.get("/api/health?deep=1")
    asked = time.monotonic() - started
    started = time.monotonic()
    again = client.get("/api/health?deep=1")
    assert time.monotonic() - started < asked / 2, "the second check reuses the first one's asking"
    assert first.json()["workers"] == again.json()["workers"] == {"ok": False}


def test_deep_checks_by_anyone_but_staff_are_rate_limited_even_in_a_simultaneous_burst(monkeypatch, settings):
    settings.HEALTH_DEEP_CACHE_S = 60
    monkeypatch.setattr(DeepHealthThrottle, "THROTTLE_RATES", {"health": "5/min"})
    address = f"10.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}.{uuid.uuid4().int % 250}"  # a fresh count
    answers: list[int] = []

    def deep_check() -> None:
        answers.append(APIClient(REMOTE_ADDR=address).get("/api/health?deep=1").status_code)
        connections.close_all()

    burst = [threading.Thread(target=deep_check) for _ in range(12)]
    for check in burst:
        check.start()
    for check in burst:
        check.join()
    assert answers.count(429) == 7, answers
    client = APIClient(REMOTE_ADDR=address)
    refused = client.get("/api/health?deep=1")
    assert refused.status_code == 429 and refused.json()["error"]["code"] == "throttled"
    assert client.get("/api/health").status_code == 200, "the plain check is not limited"
    staff = APIClient(REMOTE_ADDR=address)
    staff.force_authenticate(get_user_model().objects.create(username="operator", is_staff=True))
    assert staff.get("/api/health?deep=1").status_code == 503  # asked afresh: no worker runs here


def test_migrations_run_without_the_statement_time_limit_and_requests_get_it_back(settings):
    pool_tracking._lift_statement_timeout(sender=None)
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('statement_timeout')")
        assert cursor.fetchone()[0] == "0"
    pool_tracking._restore_statement_timeout(sender=None)
    with connection.cursor() as cursor:
        cursor.execute("SELECT current_setting('statement_timeout')")
        assert cursor.fetchone()[0] == f"{settings.DATABASE_STATEMENT_TIMEOUT_S:g}s"


@pytest.mark.urls(__name__)
def test_a_slow_client_s_upload_time_does_not_count(settings):
    """The body arrives before the view takes a connection: only the time the connection is kept counts."""
    settings.REQUEST_CONNECTION_TIMEOUT_S = 0.3
    view_may_finish.set()
    chunks = [{"type": "http.request", "body": b"x", "more_body": True}, {"type": "http.request", "body": b"y"}]
    sent: list[dict] = []

    async def receive():
        if chunks:
            await asyncio.sleep(0.5)  # longer than the limit, between the body's chunks
            return chunks.pop(0)
        await asyncio.Event().wait()

    async def send(message):
        sent.append(message)

    asyncio.run(ConnectionSafeASGIHandler()(_scope("/api/waiting"), receive, send))
    assert sent[0]["status"] == 200, sent
