"""The cache's connections to Redis: one pool for the whole process, whichever thread asks."""

from __future__ import annotations

import threading

import pytest
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


def test_a_full_pool_fails_one_command_and_does_not_turn_the_cache_off(settings):
    """A full pool says nothing of Redis: the next command, once a connection is free, goes to Redis
    rather than being refused for FAILED_BACKOFF_S as if Redis were down."""
    default = settings.CACHES["default"]
    settings.CACHES = {"default": {**default, "OPTIONS": {**default.get("OPTIONS", {}), "max_connections": 1}}}
    cache = caches["default"]
    cache.set("still-here", "yes", 30)
    pool = cache._cache.get_client().connection_pool
    held = pool.get_connection()
    try:
        with pytest.raises(redis.ConnectionError):
            cache.get("still-here")
    finally:
        pool.release(held)
    assert cache.get("still-here") == "yes"
