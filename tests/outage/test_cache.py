"""The cache is Redis, and only saves work: when Redis fails, reads that use it compute without it."""

from __future__ import annotations

import socket
import time

import pytest

from tests.factories import ChatSessionFactory


@pytest.fixture
def hung_redis_url():
    """A port that accepts connections and never answers, like a Redis that hangs (stopped, swapping)."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        yield f"redis://127.0.0.1:{listener.getsockname()[1]}/0"


@pytest.mark.django_db
def test_recall_against_a_hung_redis_answers_without_the_cache(auth_client, user, settings, hung_redis_url):
    session = ChatSessionFactory(owner=user)
    auth_client.post(
        f"/api/sessions/{session.pk}/messages",
        {"messages": [{"role": "user", "content": "The Aurora kettle needs descaling every four weeks."}]},
        format="json",
    )
    auth_client.post("/api/memory/recall", {"query": "kettle"}, format="json")  # loads the embedding model
    settings.CACHES = {"default": {**settings.CACHES["default"], "LOCATION": hung_redis_url}}
    started = time.monotonic()
    response = auth_client.post("/api/memory/recall", {"query": "descaling the kettle"}, format="json")
    elapsed = time.monotonic() - started
    print(f"recall against a hung Redis: {elapsed:.2f}s")
    assert response.status_code == 200, response.json()
    assert elapsed < 2
