"""The deep health check reports each worker queue's backlog, the oldest waiting task's age and who
consumes it, and says in words what is wrong; others than staff learn only what works."""

import json
import time

import pytest
import redis
from django.conf import settings
from rest_framework.test import APIClient

from foundation import health
from foundation.celery import QUEUES, SENT_AT_HEADER
from foundation.celery import app as celery_app

# The messages are published for real, as a server does (the test settings otherwise run tasks at once).
pytestmark = pytest.mark.filterwarnings("ignore:task_always_eager has no effect")


@pytest.fixture
def broker():
    """The test broker's queues, empty before and after."""
    client = redis.Redis.from_url(settings.REDIS_URL)
    client.delete(*QUEUES)
    yield client
    client.delete(*QUEUES)


def test_a_queue_nobody_consumes_is_said_in_words_with_its_backlog(broker):
    celery_app.send_task("documents.index_document", args=["00000000-0000-0000-0000-000000000000"])
    report = health.queue_status(consumers={"interactive": ["interactive-1@host"], "bulk": []})
    assert not report["ok"]
    assert report["queues"]["bulk"]["waiting"] == 1 and report["queues"]["interactive"]["waiting"] == 0
    assert 0 <= report["queues"]["bulk"]["oldest_age_s"] < 30
    assert report["problems"] == ["no worker is consuming the bulk queue"]


def test_a_task_waiting_too_long_is_reported_with_its_age(broker):
    celery_app.send_task("core.embed_rows", args=["messages", [1]])
    # The same message as sent, but stamped 20 minutes ago.
    raw = json.loads(broker.rpop("interactive"))
    raw["headers"][SENT_AT_HEADER] = time.time() - 1200
    broker.rpush("interactive", json.dumps(raw))
    report = health.queue_status(consumers={"interactive": ["w"], "bulk": ["w"]})
    assert report["problems"] == ["the oldest of 1 tasks in the interactive queue has waited 20 min"]
    assert report["queues"]["interactive"]["oldest_age_s"] >= 1200


def test_everything_consumed_and_nothing_waiting_is_ok(broker):
    report = health.queue_status(consumers={"interactive": ["w"], "bulk": ["w"]})
    assert report["ok"] and report["problems"] == [] and report["queues"]["bulk"]["waiting"] == 0


@pytest.mark.django_db
def test_the_deep_check_tells_staff_what_is_wrong_and_others_only_that_it_is(staff_api, broker):
    # No worker consumes the test broker's queues.
    staff = staff_api.get("/api/health?deep=1")
    assert staff.status_code == 503
    body = staff.json()
    assert "no worker is consuming the interactive queue" in body["problems"]
    assert body["queues"]["queues"]["bulk"]["consumers"] == []
    anyone = APIClient().get("/api/health?deep=1").json()
    assert anyone["workers"] == {"ok": False} and anyone["queues"] == {"ok": False} and "problems" not in anyone


def test_health_checks_reuse_their_redis_connection(broker):
    """A balancer asks every few seconds: each check used to connect to Redis anew."""
    assert health.redis_status()["ok"]
    before = broker.info("stats")["total_connections_received"]
    reports = [health.redis_status() for _ in range(20)]
    assert all(report["ok"] for report in reports)
    assert broker.info("stats")["total_connections_received"] == before


def test_a_redis_that_cannot_be_reached_is_reported_not_ok(settings):
    settings.REDIS_URL = "redis://127.0.0.1:9/0"  # the discard port: nothing listens there
    report = health.redis_status()
    assert report["ok"] is False and report["error"]
