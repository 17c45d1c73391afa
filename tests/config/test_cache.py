"""The cache's connections to Redis: one pool for the whole process, whichever thread asks."""

from __future__ import annotations

import threading

import redis
from django.conf import settings
from django.core.cache import caches


def _cache_get_on_a_new_thread(key: str) -> None:
    # Django gives each thread a cache object of its own, as each request's thread gets.
    thread = threading.Thread(target=lambda: caches["default"].get(key))
    thread.start()
    thread.join()


def test_requests_on_threads_of_their_own_share_the_cache_connections():
    """Each request runs on a thread of its own: it used to open a new connection to Redis, with its
    handshake, every time."""
    _cache_get_on_a_new_thread("warm")
    server = redis.Redis.from_url(settings.REDIS_URL)
    before = server.info("stats")["total_connections_received"]
    for index in range(10):
        _cache_get_on_a_new_thread(f"key-{index}")
    assert server.info("stats")["total_connections_received"] - before <= 1


def test_a_value_set_on_one_thread_is_read_on_another():
    caches["default"].set("shared-value", {"answer": 42}, 30)
    seen = []
    thread = threading.Thread(target=lambda: seen.append(caches["default"].get("shared-value")))
    thread.start()
    thread.join()
    assert seen == [{"answer": 42}]
