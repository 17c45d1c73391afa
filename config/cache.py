"""The cache backend: Django's Redis cache, made to fail at once while Redis is known to be down.

Everything that uses the cache copes with Redis failing (the cache only saves work), but each failure
costs a connect or read timeout, and one request may use the cache a dozen times: against a Redis that
hangs, a search took seven seconds. After a failure, this process skips Redis for FAILED_BACKOFF_S and
raises at once instead; the first call after that tries Redis again.
"""

from __future__ import annotations

import functools
import threading
import time

import redis
from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from redis.exceptions import MaxConnectionsError

FAILED_BACKOFF_S = 5.0

# When each set of servers last failed, shared by the cache objects of every thread of the process.
_failed_at: dict[tuple[str, ...], float] = {}

# Django makes a cache object per thread, and each made its own connection pool: every request (each
# runs on a thread of its own) opened a new connection to Redis, with its handshake, where one pool per
# server and options, shared by the process's threads, lends a connection already open. Each pool is
# kept with the one Redis client that borrows from it.
_shared_clients: dict[tuple[str, type, str], redis.Redis] = {}
_shared_lock = threading.Lock()
# How many connections the shared pool may open (redis-py's own default is 100, where each thread's pool
# had 100): a pool opens only as many as are in use at once, and a process never has this many commands
# in flight. ``max_connections`` in the cache's OPTIONS overrides it.
POOL_MAX_CONNECTIONS = 1000


def _fail_fast(method):
    @functools.wraps(method)
    def call(client: RedisCacheClient, *args, **kwargs):
        servers = tuple(client._servers)
        failed = _failed_at.get(servers)
        if failed is not None and time.monotonic() - failed < FAILED_BACKOFF_S:
            raise redis.ConnectionError("Redis failed a moment ago; not tried again yet.")
        try:
            return method(client, *args, **kwargs)
        except MaxConnectionsError:
            raise  # this process's pool is full, which says nothing of Redis: the next command may go
        except (redis.ConnectionError, redis.TimeoutError):
            _failed_at[servers] = time.monotonic()
            raise

    return call


class FailFastRedisCacheClient(RedisCacheClient):
    """Each command of Django's client, skipped while Redis is known to be down; one connection pool per
    server for the whole process, where Django's makes one per thread; and one Redis client object per
    pool, where Django's builds a new one for every command (its table of reply handlers, about 170
    entries, filled each time: 1.6 ms of a chat turn's processor)."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, redis.Redis] = {}  # by server index, found once per cache object

    def get_client(self, key=None, *, write: bool = False) -> redis.Redis:
        index = self._get_connection_pool_index(write)
        client = self._clients.get(index)
        if client is None:
            client = self._clients[index] = self._shared_client(self._servers[index])
        return client

    def _shared_client(self, server: str) -> redis.Redis:
        key = (server, self._pool_class, repr(sorted(self._pool_options.items())))
        with _shared_lock:
            client = _shared_clients.get(key)
            if client is None:
                # A pool and a client are safe to share between threads; a pool starts anew after a fork.
                options = {"max_connections": POOL_MAX_CONNECTIONS, **self._pool_options}
                pool = self._pool_class.from_url(server, **options)
                client = _shared_clients[key] = self._client(connection_pool=pool)
        return client


_COMMANDS = ("add", "get", "set", "touch", "delete", "get_many", "has_key", "incr", "set_many", "delete_many", "clear")
for _name in _COMMANDS:
    setattr(FailFastRedisCacheClient, _name, _fail_fast(getattr(RedisCacheClient, _name)))


class FailFastRedisCache(RedisCache):
    # Django's RedisCache (as pinned: Django 5.2.19) takes its client class from the private attribute
    # ``_class``, with no setting for it. tests/outage/test_cache.py (a hung Redis: recall answers in under
    # 2 s) fails without this line; a Django that renames the attribute makes that test fail too.
    def __init__(self, server, params) -> None:
        super().__init__(server, params)
        self._class = FailFastRedisCacheClient
