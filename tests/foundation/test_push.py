"""Pushes to a person's open pages: sent over connections the process keeps, in the order they were
made, from any thread, and from a worker's forked child too."""

from __future__ import annotations

import os
import threading

import pytest
import redis
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.conf import settings

from foundation.push import push_to_user, user_group
from tests.helpers import pushed_events

USER_ID = 424242


@pytest.fixture
def listening():
    """A channel in the user's group, as an open page's socket is; what it received, in order."""
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(user_group(USER_ID), channel)

    yield lambda: pushed_events(channel)
    async_to_sync(layer.group_discard)(user_group(USER_ID), channel)


def test_pushes_reuse_their_connection_and_arrive_in_order(listening):
    """A document's statuses follow each other within milliseconds: each push used to connect to Redis
    anew, and the page must see them in the order they happened."""
    assert push_to_user(USER_ID, "document", {"n": -1})
    server = redis.Redis.from_url(settings.REDIS_URL)
    before = server.info("stats")["total_connections_received"]
    assert all(push_to_user(USER_ID, "document", {"n": n}) for n in range(20))
    assert server.info("stats")["total_connections_received"] == before
    assert [event["n"] for event in listening()] == list(range(-1, 20))


def test_pushes_from_many_threads_at_once_all_arrive(listening):
    results = []
    threads = [
        threading.Thread(target=lambda n=n: results.append(push_to_user(USER_ID, "document", {"n": n})))
        for n in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert results == [True] * 8
    assert sorted(event["n"] for event in listening()) == list(range(8))


def test_a_forked_process_pushes_on_a_loop_of_its_own(listening):
    """A worker's children are forked from a process that may have pushed already: the thread its pushes
    went through is not inherited, and a push must not wait on it."""
    assert push_to_user(USER_ID, "document", {"n": "parent"})
    read_end, write_end = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover (the child's own exit status carries the result)
        try:
            os.write(write_end, b"1" if push_to_user(USER_ID, "document", {"n": "child"}) else b"0")
        finally:
            os._exit(0)
    os.close(write_end)
    os.waitpid(child, 0)
    assert os.read(read_end, 1) == b"1"
    os.close(read_end)
    assert [event["n"] for event in listening()] == ["parent", "child"]
