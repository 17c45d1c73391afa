"""Turns sharing a process: a model's answer streaming gives way to the turns being prepared, so that in
a burst every new turn gets its first token before the answers already under way go on. Each pause and
their total have a bound, a cancelled answer stops pausing at once, an answer read whole or quoted by
the built-in engine never pauses, and a preparation that fails is not counted for ever."""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time

import pytest
from django.db import connections

from chat_app import services
from chat_app.concurrency import Cancellation, DatabaseGate, preparations, turn_slots
from chat_app.services import ChatRequest, chat_turn
from chat_app.streaming import chat_events
from retrieval_app.models import SearchTrace
from sessions_app.models import Message

ANSWER = "one two three four five six seven eight"
pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def held_preparation(monkeypatch):
    """Another person's turn whose preparation (the prompt's assembly) lasts until ``release`` is set."""
    release, started = threading.Event(), threading.Event()
    assemble = services._assemble

    def slow_assemble(turn):
        if turn.request.message.startswith("Meanwhile"):
            started.set()
            release.wait(timeout=30)
        assemble(turn)

    monkeypatch.setattr(services, "_assemble", slow_assemble)
    threads: list[threading.Thread] = []
    assert preparations().count == 0, "a turn of an earlier test is still counted"

    def begin(owner) -> threading.Thread:
        def run():
            try:
                list(chat_turn(owner=owner, request=ChatRequest(message="Meanwhile, what is new?")))
            finally:
                connections.close_all()

        thread = threading.Thread(target=run, daemon=True)
        thread.start()
        threads.append(thread)
        assert started.wait(timeout=10), "the other turn never reached its preparation"
        return thread

    yield begin, release
    release.set()
    for thread in threads:  # before the test's rows are flushed
        thread.join(timeout=30)


def _chat(owner, *, streamed: bool, cancel: Cancellation | None = None):
    return chat_events(
        owner=owner,
        request=ChatRequest(message="Count to eight."),
        target=None,
        cancel=cancel or Cancellation(),
        streamed=streamed,
    )


async def _rest(turn, events: list) -> dict:
    async for event in turn:
        events.append(event)
    return events[-1].data


def _after_the_first_piece(user, release: threading.Event, *, meanwhile=None) -> tuple[bool, dict, list]:
    """A streamed turn read up to its first piece; then whether another piece came within 0.6 s (after
    ``meanwhile``, if given), before ``release`` is set; then its ``done`` data and all its events."""

    async def scenario():
        turn, events = _chat(user, streamed=True), []
        async for event in turn:
            events.append(event)
            if event.type == "token":
                break
        following = asyncio.ensure_future(turn.__anext__())
        if meanwhile is not None:
            await asyncio.sleep(0.2)
            meanwhile()
        finished, _ = await asyncio.wait({following}, timeout=0.6)
        release.set()
        events.append(await following)
        return bool(finished), await _rest(turn, events), events

    return asyncio.run(scenario())


def _ended_as_disconnected() -> SearchTrace | None:
    """The chat turn's trace once it says the client went away (waiting up to 20 s for it)."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        trace = SearchTrace.objects.filter(kind="chat").first()
        if trace is not None and trace.outcome == SearchTrace.Outcome.DISCONNECTED:
            return trace
        time.sleep(0.05)
    return None


def _tokens(events) -> list[str]:
    return [event.data["token"] for event in events if event.type == "token"]


@pytest.fixture
def pauses(settings):
    """Sets how long an answer pauses at a time and in all (milliseconds)."""

    def set_to(each_ms: int, total_ms: int = 60_000) -> None:
        settings.CHAT_STREAM_GIVE_WAY_MS, settings.CHAT_STREAM_GIVE_WAY_TOTAL_MS = each_ms, total_ms

    return set_to


def test_an_answer_streaming_waits_while_another_turn_is_prepared_then_catches_up(
    user, hosted_llm, pauses, held_preparation
):
    pauses(30_000)
    hosted_llm.reply = lambda messages: ANSWER
    begin, release = held_preparation
    begin(user)

    went_on, done, events = _after_the_first_piece(user, release)
    assert not went_on, "no piece went out while the other turn was prepared"
    assert done["message"].split() == ANSWER.split() and "".join(_tokens(events)) == done["message"], "nothing lost"


def test_an_answer_gives_way_for_a_bounded_time_however_long_others_prepare(user, hosted_llm, pauses, held_preparation):
    pauses(100)
    hosted_llm.reply = lambda messages: ANSWER
    begin, _ = held_preparation
    begin(user)  # and not released while the answer streams
    started = time.perf_counter()
    done = asyncio.run(_rest(_chat(user, streamed=True), []))
    took = time.perf_counter() - started
    assert done["message"].split() == ANSWER.split()
    # It paused after each of its eight pieces, and went on after each pause.
    assert 0.1 * (len(ANSWER.split()) - 1) <= took < 10
    assert preparations().count == 1, "the other turn is still being prepared"


def test_an_answer_stops_giving_way_once_its_pauses_reach_their_total(user, hosted_llm, pauses, held_preparation):
    pauses(100, total_ms=300)
    long_answer = " ".join(f"word{number}" for number in range(40))
    hosted_llm.reply = lambda messages: long_answer
    begin, _ = held_preparation
    begin(user)
    started = time.perf_counter()
    done = asyncio.run(_rest(_chat(user, streamed=True), []))
    assert done["message"].split() == long_answer.split()
    # Three pauses, then the other 36 pieces as they come (pausing after each would take 3.9 s).
    assert 0.25 <= time.perf_counter() - started < 2


def test_a_cancelled_answer_stops_pausing_at_once(user, hosted_llm, pauses, held_preparation):
    pauses(30_000)
    hosted_llm.reply = lambda messages: ANSWER
    begin, _ = held_preparation
    begin(user)
    cancel = Cancellation()

    async def scenario():
        turn, events = _chat(user, streamed=True, cancel=cancel), []
        async for event in turn:
            events.append(event)
            if event.type == "token":
                break
        await asyncio.sleep(0.2)  # the answer is pausing now
        cancel.cancel()
        started = time.perf_counter()
        done = await _rest(turn, events)
        return done, time.perf_counter() - started

    done, took = asyncio.run(scenario())
    assert done.get("status") == "cancelled" and took < 5, (done, took)


@pytest.mark.parametrize("engine", ["read whole", "built-in"])
def test_an_answer_nobody_reads_piece_by_piece_or_that_costs_nothing_does_not_give_way(
    user, fake_llm, settings, pauses, held_preparation, engine
):
    pauses(2_000)
    if engine == "read whole":  # the OpenAI-compatible door without stream
        settings.LLM_MODEL, settings.LLM_API_BASE, settings.LLM_API_KEY = "openai/test-chat", fake_llm.url, "sk-test"
        fake_llm.reply = lambda messages: ANSWER
    begin, _ = held_preparation
    begin(user)
    started = time.perf_counter()
    done = asyncio.run(_rest(_chat(user, streamed=engine == "built-in"), []))
    assert done["message"]
    assert time.perf_counter() - started < 10, "it never waits for others' turns"
    assert preparations().count == 1


def test_a_preparation_that_fails_is_no_longer_counted(user, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(services, "_prepare", broken)
    with pytest.raises(RuntimeError):
        list(chat_turn(owner=user, request=ChatRequest(message="hello")))
    assert preparations().count == 0
    assert preparations().give_way(pause_s=5, cancel=Cancellation()) == 0.0, "nothing to give way to"


def test_a_client_that_leaves_while_its_turn_is_prepared_leaves_it_ended_and_the_model_uncalled(
    user, hosted_llm, fake_llm, monkeypatch
):
    fake_llm.reply = lambda messages: ANSWER
    preparing, release = threading.Event(), threading.Event()
    assemble = services._assemble

    def slow_assemble(turn):
        preparing.set()
        release.wait(timeout=30)
        assemble(turn)

    monkeypatch.setattr(services, "_assemble", slow_assemble)

    async def scenario():
        turn = _chat(user, streamed=True)
        reading = asyncio.ensure_future(turn.__anext__())
        while not preparing.is_set():
            await asyncio.sleep(0.01)
        reading.cancel()  # the socket closed while the turn was being prepared
        with contextlib.suppress(asyncio.CancelledError):
            await reading

    asyncio.run(scenario())
    release.set()
    trace = _ended_as_disconnected()
    assert trace is not None, "the turn was ended as abandoned"
    assert Message.objects.filter(session_id=trace.session_id, role="user").count() == 1, "the question is kept"
    assert not Message.objects.filter(session_id=trace.session_id, role="assistant").exists()
    assert not [r for r in fake_llm.requests if r["path"].endswith("/chat/completions")], "the model was never asked"
    assert preparations().count == 0


def test_an_answer_keeps_giving_way_when_another_turn_ends_while_one_is_still_prepared(
    user, hosted_llm, pauses, held_preparation
):
    pauses(30_000)
    hosted_llm.reply = lambda messages: ANSWER
    begin, release = held_preparation
    begin(user)

    # Woken as when any other turn of the process ends, or is cancelled.
    went_on, done, _ = _after_the_first_piece(user, release, meanwhile=preparations().wake)
    assert not went_on, "the answer went on while a turn was still being prepared"
    assert done["message"].split() == ANSWER.split()


def test_a_client_that_leaves_once_it_has_the_context_leaves_the_turn_ended_and_its_place_free(
    user, hosted_llm, fake_llm, settings
):
    fake_llm.reply = lambda messages: ANSWER

    async def scenario():
        turn = _chat(user, streamed=True)
        first = await turn.__anext__()
        await turn.aclose()  # the connection closed as the context went out
        return first

    first = asyncio.run(scenario())
    assert first.type == "context"
    trace = _ended_as_disconnected()
    assert trace is not None, "the turn was ended as abandoned"
    assert not Message.objects.filter(session_id=trace.session_id, role="assistant").exists()
    assert not [r for r in fake_llm.requests if r["path"].endswith("/chat/completions")], "the model was never asked"
    slots, deadline = turn_slots(), time.monotonic() + 20
    while time.monotonic() < deadline and slots._value < settings.CHAT_MAX_CONCURRENT_TURNS:
        time.sleep(0.05)
    assert slots._value == settings.CHAT_MAX_CONCURRENT_TURNS, "every turn's place is given back"


@pytest.fixture
def held_gate():
    """A database gate of one place, held until the test sets the event it is given with the gate."""
    gate, release, held = DatabaseGate(1), threading.Event(), threading.Event()

    def holder():
        with gate.entered():
            held.set()
            release.wait(5)

    threading.Thread(target=holder).start()
    assert held.wait(5)
    yield gate, release
    release.set()


def _queued(gate: DatabaseGate, count: int) -> None:
    """Waits until ``count`` turns wait at ``gate``."""
    deadline = time.monotonic() + 5
    while gate.waiting < count and time.monotonic() < deadline:
        time.sleep(0.005)


def test_an_answer_being_recorded_enters_the_database_gate_before_turns_waiting_to_be_prepared(held_gate):
    gate, release = held_gate
    order: list[str] = []

    def waiter(name: str, first: bool):
        with gate.entered(first=first):
            order.append(name)

    preparing = threading.Thread(target=waiter, args=("prepare", False))
    preparing.start()
    _queued(gate, 1)  # the turn to prepare queues first
    recording = threading.Thread(target=waiter, args=("record", True))
    recording.start()
    _queued(gate, 2)
    release.set()
    preparing.join(5)
    recording.join(5)
    assert order == ["record", "prepare"]
    with gate.entered():  # every place is given back
        pass


def test_turns_waiting_at_the_database_gate_enter_in_the_order_they_came(held_gate):
    gate, release = held_gate
    order: list[int] = []

    def waiter(number: int):
        with gate.entered():
            order.append(number)

    threads = []
    for number in range(6):
        threads.append(threading.Thread(target=waiter, args=(number,)))
        threads[-1].start()
        _queued(gate, number + 1)
    release.set()
    for thread in threads:
        thread.join(5)
    assert order == list(range(6))
