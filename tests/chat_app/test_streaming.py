"""Relaying a turn's events from its thread to the event loop: every event once, in order, tokens that
queued up together sent as one, the end of the turn last."""

import asyncio
import threading

from chat_app import events
from chat_app.events import Event
from chat_app.streaming import _merged_tokens, _Relay


def _token(text: str) -> Event:
    return Event(events.TOKEN, {"token": text})


def test_runs_of_tokens_go_out_as_one_and_other_events_keep_their_place():
    context, mood = Event(events.CONTEXT, {"hits": []}), Event(events.MOOD, {"mood": "sure"})
    merged = _merged_tokens([context, _token("The "), _token("boiler "), mood, _token("is "), _token("fixed."), None])
    assert [item.type if item else None for item in merged] == [
        events.CONTEXT,
        events.TOKEN,
        events.MOOD,
        events.TOKEN,
        None,
    ]
    assert merged[1].data["token"] == "The boiler " and merged[3].data["token"] == "is fixed."


def test_a_thread_putting_thousands_of_events_is_relayed_whole_and_in_order():
    async def relay_all() -> list:
        relay = _Relay(asyncio.get_running_loop())

        def produce() -> None:
            for number in range(5000):
                relay.put(_token(f"{number} "))
            relay.put(None)

        threading.Thread(target=produce).start()
        received = []
        while True:
            batch = await relay.take()
            assert batch, "a wake-up always brings something"
            received += batch
            if received[-1] is None:
                return received

    received = asyncio.run(relay_all())
    assert received[-1] is None and len(received) == 5001
    text = "".join(item.data["token"] for item in _merged_tokens(received[:-1]))
    assert text == "".join(f"{number} " for number in range(5000))
