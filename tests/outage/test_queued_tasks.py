"""The jobs kept in PostgreSQL while the broker refuses them, and the sweep that sends them later. The
broker's refusal is simulated here (the tests in test_requests.py kill a real Redis): what is checked
is the order, that nothing is lost or sent twice, and that one bad job never blocks the rest."""

from __future__ import annotations

import pytest
from kombu.exceptions import OperationalError

from foundation import queues
from foundation.models import QueuedTask

pytestmark = pytest.mark.django_db


@pytest.fixture
def broker(monkeypatch):
    """A broker that takes jobs until told to refuse them; records what it took."""

    class Broker:
        def __init__(self) -> None:
            self.taken: list = []
            self.refuse_after: int | None = None

        def publish(self, task_name, args):
            if self.refuse_after is not None and len(self.taken) >= self.refuse_after:
                raise OperationalError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")
            if task_name == "no.such.task":
                raise KeyError(task_name)
            self.taken.append((task_name, list(args)))

    fake = Broker()
    monkeypatch.setattr(queues, "_publish", fake.publish)
    monkeypatch.setattr(queues, "_broker_down_until", 0.0)
    return fake


def test_a_refused_job_is_kept_and_the_broker_left_alone_for_a_moment(broker):
    broker.refuse_after = 0
    assert queues.enqueue("core.embed_rows", "messages", [1, 2]) is False
    broker.refuse_after = None  # back, but this process does not try it again at once
    assert queues.enqueue("core.embed_rows", "messages", [3]) is False
    assert broker.taken == []
    assert list(QueuedTask.objects.order_by("id").values_list("task", "args")) == [
        ("core.embed_rows", ["messages", [1, 2]]),
        ("core.embed_rows", ["messages", [3]]),
    ]


def test_the_sweep_sends_in_order_and_stops_where_the_broker_refuses(broker):
    for n in range(5):
        QueuedTask.objects.create(task="core.embed_rows", args=["messages", [n]])
    broker.refuse_after = 2
    assert queues.queued_tasks_send() == 2
    assert QueuedTask.objects.count() == 3
    broker.refuse_after = None
    assert queues.queued_tasks_send() == 3
    assert [args[1] for _, args in broker.taken] == [[0], [1], [2], [3], [4]]
    assert not QueuedTask.objects.exists()


def test_a_job_that_can_never_be_sent_does_not_block_the_others(broker):
    QueuedTask.objects.create(task="no.such.task", args=[])
    QueuedTask.objects.create(task="core.embed_rows", args=["messages", [7]])
    assert queues.queued_tasks_send() == 1
    assert broker.taken == [("core.embed_rows", ["messages", [7]])]
    assert not QueuedTask.objects.exists()


def test_a_job_the_broker_took_badly_is_kept_for_the_sweep_not_lost(broker, monkeypatch):
    def unexpected(task_name, args):
        raise KeyError(task_name)  # e.g. a task not registered yet in this process

    monkeypatch.setattr(queues, "_publish", unexpected)
    assert queues.enqueue("documents.index_document", "doc-1") is False
    assert list(QueuedTask.objects.values_list("task", "args")) == [("documents.index_document", ["doc-1"])]
