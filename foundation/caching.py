"""Figures that are costly to count and slow to change (how many rows a search scope holds, how many hold
a word), remembered in two tiers: this process's memory for LOCAL_TTL_S, then Redis for as long as the
caller says. A search reads a dozen of them; from the process's own memory each costs nothing, where a
Redis round trip each would cost a busy turn a few milliseconds. Every value may be a little stale:
callers only ever use them where staleness costs a little ranking precision, never a result.

Redis down: the process's memory still answers, and what neither knows is computed.

A figure belongs to the database it was counted in: keys are kept under that database's name and
server, so two deployments (or a test run and the product) that share a Redis never read each other's.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from typing import Any

from django.core.cache import cache
from django.db import DEFAULT_DB_ALIAS, connections

# How long this process trusts what it remembered, and how many figures it keeps (the oldest go first).
LOCAL_TTL_S = 30.0
LOCAL_MAX_ENTRIES = 20_000

_local: OrderedDict[str, tuple[float, Any]] = OrderedDict()
_lock = threading.Lock()


def _local_get(key: str) -> tuple[bool, Any]:
    with _lock:
        found = _local.get(key)
        if found is None:
            return False, None
        expires, value = found
        if expires < time.monotonic():
            del _local[key]
            return False, None
        _local.move_to_end(key)
        return True, value


def _local_set(key: str, value: Any) -> None:
    with _lock:
        _local[key] = (time.monotonic() + LOCAL_TTL_S, value)
        _local.move_to_end(key)
        while len(_local) > LOCAL_MAX_ENTRIES:
            _local.popitem(last=False)


def _in_database(key: str) -> str:
    """``key`` under the name of the database its figure is counted in."""
    database = connections[DEFAULT_DB_ALIAS].settings_dict
    return f"{database['NAME']}@{database.get('HOST') or ''}:{database.get('PORT') or ''}:{key}"


def remembered(key: str, compute: Callable[[], Any], *, ttl: float) -> Any:
    """The value under ``key``: this process's, else Redis's, else ``compute()`` (then kept in both, in
    Redis for ``ttl`` seconds). ``None`` is never remembered."""
    key = _in_database(key)
    known, value = _local_get(key)
    if known:
        return value
    with contextlib.suppress(Exception):  # Redis down: compute rather than fail
        value = cache.get(key)
    if value is None:
        value = compute()
        with contextlib.suppress(Exception):
            cache.set(key, value, ttl)
    if value is not None:
        _local_set(key, value)
    return value


def remembered_many(keys: Iterable[str]) -> dict[str, Any]:
    """The values known for ``keys``, from this process's memory, then Redis for the rest."""
    named = {_in_database(key): key for key in keys}
    found: dict[str, Any] = {}
    missing = []
    for key in named:
        known, value = _local_get(key)
        if known:
            found[named[key]] = value
        else:
            missing.append(key)
    if missing:
        with contextlib.suppress(Exception):
            from_redis = cache.get_many(missing)
            for key, value in from_redis.items():
                _local_set(key, value)
                found[named[key]] = value
    return found


def remember_many(values: dict[str, Any], *, ttl: float) -> None:
    """Keeps ``values`` in both tiers."""
    values = {_in_database(key): value for key, value in values.items()}
    for key, value in values.items():
        _local_set(key, value)
    with contextlib.suppress(Exception):
        cache.set_many(values, ttl)


def forget_all_local() -> None:
    """Empties this process's tier (tests start each case from what Redis holds)."""
    with _lock:
        _local.clear()
