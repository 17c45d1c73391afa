"""Turns sharing a process: a model's answer streaming gives way to the turns being prepared, so that in
a burst every new turn gets its first token before the answers already under way go on; the pause has
a bound, an answer read whole never pauses, and a preparation that fails is not counted for ever."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest
from django.db import connections

from chat_app import services
from chat_app.concurrency import Cancellation, preparations
from chat_app.services import ChatRequest, chat_turn
from chat_app.streaming import chat_events

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


def _chat(owner, *, streamed: bool):
    return chat_events(
        owner=owner,
        request=ChatRequest(message="Count to eight."),
        target=None,
        cancel=Cancellation(),
        streamed=streamed,
    )


async def _rest(turn, events: list) -> dict:
    async for event in turn:
        events.append(event)
    return events[-1].data


def _tokens(events) -> list[str]:
    return [event.data["token"] for event in events if event.type == "token"]


def test_an_answer_streaming_waits_while_another_turn_is_prepared_then_catches_up(
    user, hosted_llm, settings, held_preparation
):
    settings.CHAT_STREAM_GIVE_WAY_MS = 30_000
    hosted_llm.reply = lambda messages: ANSWER
    begin, release = held_preparation
    begin(user)

    async def scenario():
        turn, events = _chat(user, streamed=True), []
        async for event in turn:
            events.append(event)
            if event.type == "token":
                break
        following = asyncio.ensure_future(turn.__anext__())
        finished, _ = await asyncio.wait({following}, timeout=0.6)
        release.set()
        events.append(await following)
        return bool(finished), await _rest(turn, events), events

    went_on, done, events = asyncio.run(scenario())
    assert not went_on, "no piece went out while the other turn was prepared"
    assert done["message"].split() == ANSWER.split() and "".join(_tokens(events)) == done["message"], "nothing lost"


def test_an_answer_gives_way_for_a_bounded_time_however_long_others_prepare(
    user, hosted_llm, settings, held_preparation
):
    settings.CHAT_STREAM_GIVE_WAY_MS = 100
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


def test_an_answer_read_whole_does_not_give_way(user, hosted_llm, settings, held_preparation):
    settings.CHAT_STREAM_GIVE_WAY_MS = 30_000
    hosted_llm.reply = lambda messages: ANSWER
    begin, _ = held_preparation
    begin(user)
    started = time.perf_counter()
    done = asyncio.run(_rest(_chat(user, streamed=False), []))
    assert done["message"].split() == ANSWER.split()
    assert time.perf_counter() - started < 10, "nobody sees its first piece, so it never waits for others"
    assert preparations().count == 1


def test_a_preparation_that_fails_is_no_longer_counted(user, monkeypatch):
    def broken(*args, **kwargs):
        raise RuntimeError("the database went away")

    monkeypatch.setattr(services, "_prepare", broken)
    with pytest.raises(RuntimeError):
        list(chat_turn(owner=user, request=ChatRequest(message="hello")))
    assert preparations().count == 0
    started = time.perf_counter()
    preparations().give_way(pause_s=5)
    assert time.perf_counter() - started < 0.5, "nothing to give way to"
