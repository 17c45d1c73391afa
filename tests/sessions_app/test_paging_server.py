"""A long conversation read from a real Daphne: its answer is bounded, and reading it whole, page after
page, does not grow the server's memory the way one unbounded answer did (3,000 messages of 10 KB were
one 31 MB answer, and Daphne grew by about 80 MB with each such GET)."""

from __future__ import annotations

import json
import tempfile
import urllib.request
from pathlib import Path

import psutil
import pytest
from rest_framework.authtoken.models import Token

from sessions_app.models import Message
from sessions_app.selectors import PAGE_MAX_BYTES
from tests.factories import ChatSessionFactory, UserFactory
from tests.helpers import server_env, start_daphne, stop_processes

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

TURNS = 3000
TURN_CHARS = 10_000
READS = 5
# What the server may grow by over later readings of everything: far below one unbounded answer's 80 MB.
GROWTH_MAX_MB = 30
LATER_READINGS = 3


def _rss_mb(pid: int) -> float:
    return psutil.Process(pid).memory_info().rss / 2**20


@pytest.fixture
def server():
    base, process = start_daphne(
        env=server_env(), log=Path(tempfile.mkdtemp(prefix="recollect-paging-")) / "daphne.log"
    )
    yield base, process
    stop_processes([process])


def test_a_long_conversation_is_read_whole_in_bounded_pages_without_growing_the_server(server):
    base, process = server
    user = UserFactory()
    token = Token.objects.create(user=user).key
    session = ChatSessionFactory(owner=user)
    filler = "The kettle descaling schedule, again. " * (TURN_CHARS // 38)
    Message.objects.bulk_create(
        Message(session=session, owner=user, seq=n, role="user", content=f"{n}: {filler}") for n in range(1, TURNS + 1)
    )

    def get(path: str) -> bytes:
        request = urllib.request.Request(base + path, headers={"Authorization": f"Token {token}"})
        with urllib.request.urlopen(request, timeout=120) as answer:
            assert answer.status == 200
            return answer.read()

    def read_whole() -> list[int]:
        for _ in range(READS):
            body = get(f"/api/sessions/{session.id}")
            assert len(body) < 2 * PAGE_MAX_BYTES
        detail = json.loads(body)
        seen, cursor = [m["seq"] for m in detail["messages"]], detail["messages_previous"]
        while cursor:
            body = get(f"/api/sessions/{session.id}/messages?cursor={cursor}&limit=200")
            assert len(body) < 2 * PAGE_MAX_BYTES
            page = json.loads(body)
            seen, cursor = [m["seq"] for m in page["results"]] + seen, page["previous"]
        return seen

    # The first readings bring the server to its working size (its allocator keeps what pages needed,
    # and on a busy machine it takes two readings to settle). After that its size still swings by
    # 20-30 MB from one reading to the next as the allocator hands memory back, while a leak makes every
    # later reading larger: the smallest size over the next readings is what must not grow.
    for _ in range(2):
        assert read_whole() == list(range(1, TURNS + 1))
    settled = _rss_mb(process.pid)
    sizes = []
    for _ in range(LATER_READINGS):
        assert read_whole() == list(range(1, TURNS + 1))
        sizes.append(_rss_mb(process.pid))
    assert min(sizes) - settled < GROWTH_MAX_MB, sizes
