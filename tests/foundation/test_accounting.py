"""Every model call is recorded, also those a chat turn records together on its way to its first word."""

from __future__ import annotations

import time

import pytest

from foundation.accounting import calls_for_session, calls_recorded_together, record_call
from foundation.models import ModelCall
from tests.factories import ChatSessionFactory

pytestmark = pytest.mark.django_db


def _call(purpose: str) -> None:
    record_call(kind="embedding", purpose=purpose, backend="local", model="m", started=time.perf_counter())


def test_calls_recorded_together_are_all_stored_once_the_block_ends_with_their_conversation():
    session = ChatSessionFactory()
    with calls_for_session(session.id), calls_recorded_together():
        _call("chat_query")
        with calls_recorded_together():  # a search inside the turn adds to the turn's
            _call("chat_query")
        assert ModelCall.objects.count() == 0
    assert list(ModelCall.objects.values_list("purpose", "session_id")) == [("chat_query", session.id)] * 2


def test_a_block_that_fails_still_stores_the_calls_it_made():
    with pytest.raises(RuntimeError), calls_recorded_together():
        _call("chat_query")
        raise RuntimeError("the search broke")
    assert ModelCall.objects.filter(purpose="chat_query").count() == 1
    _call("find_query")  # outside any block, stored at once
    assert ModelCall.objects.filter(purpose="find_query").count() == 1
