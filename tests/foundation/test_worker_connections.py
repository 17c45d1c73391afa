"""A worker keeps its database connections from one job to the next: a burst of short jobs (embedding each
new turn) must not open a PostgreSQL connection each, which cost more than the job itself; and a
connection the database cut between two jobs is replaced, not handed to the next job."""

import subprocess
import sys

import pytest
from django.db import connection

from foundation import task_names
from foundation.celery import INTERACTIVE_QUEUE, app
from sessions_app.models import Message
from tests.factories import ChatSessionFactory, MessageFactory
from tests.helpers import ROOT, free_port, server_env, wait_until

pytestmark = [
    pytest.mark.django_db(transaction=True),
    # The jobs must go through the broker to the worker, whatever the test settings say of inline tasks.
    pytest.mark.filterwarnings("ignore::celery.exceptions.AlwaysEagerIgnored"),
]

JOBS = 12
# The worker's database sessions, told apart from the test's own.
WORKER_APPLICATION = "recollect-test-worker"


@pytest.fixture
def worker(tmp_path):
    """One interactive worker on the test database and the test Redis."""
    log_path = tmp_path / "worker.log"
    argv = [sys.executable, "-m", "celery", "-A", "config", "worker", "--queues", INTERACTIVE_QUEUE]
    argv += ["--concurrency", "1", "--loglevel", "INFO", "--hostname", f"connections-{free_port()}@%h"]
    with log_path.open("w") as log:
        env = server_env(DATABASE_APPLICATION_NAME=WORKER_APPLICATION)
        process = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_until(lambda: " ready." in log_path.read_text() or process.poll() is not None, timeout=90, what="start")
        assert process.poll() is None, log_path.read_text()[-3000:]
        yield log_path
    finally:
        process.terminate()
        process.wait(timeout=30)


def _sessions_opened() -> int:
    """Connections ever opened to the test database (PostgreSQL counts them as they end or report)."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_stat_clear_snapshot()")
        cursor.execute("SELECT sessions FROM pg_stat_database WHERE datname = current_database()")
        return cursor.fetchone()[0]


def test_a_burst_of_jobs_reuses_the_workers_connections(user, worker):
    session = ChatSessionFactory(owner=user)
    ids = [MessageFactory(session=session, content=f"Turn {n}: the heating failed again.").id for n in range(JOBS)]
    Message.objects.filter(id__in=ids).update(embedding=None, embedding_model="")
    # The worker has connected for a first job before counting starts.
    app.send_task(task_names.EMBED_ROWS, args=("messages", [str(ids[0])]), queue=INTERACTIVE_QUEUE)
    wait_until(lambda: Message.objects.get(id=ids[0]).embedding is not None, timeout=60, what="the first job")
    before = _sessions_opened()

    for message_id in ids[1:]:
        app.send_task(task_names.EMBED_ROWS, args=("messages", [str(message_id)]), queue=INTERACTIVE_QUEUE)
    wait_until(
        lambda: not Message.objects.filter(id__in=ids, embedding__isnull=True).exists(),
        timeout=60,
        what="every turn embedded",
    )

    opened = _sessions_opened() - before
    assert opened <= 2, f"{opened} connections opened for {JOBS - 1} jobs"


def _embedded_by_the_worker(message_id) -> None:
    app.send_task(task_names.EMBED_ROWS, args=("messages", [str(message_id)]), queue=INTERACTIVE_QUEUE)
    wait_until(lambda: Message.objects.get(id=message_id).embedding is not None, timeout=60, what="the job")


def test_a_connection_cut_between_two_jobs_is_replaced(user, worker):
    session = ChatSessionFactory(owner=user)
    first, second = (MessageFactory(session=session, content=f"Turn {n}: the boiler failed.").id for n in range(2))
    Message.objects.filter(id__in=[first, second]).update(embedding=None, embedding_model="")
    _embedded_by_the_worker(first)
    with connection.cursor() as cursor:  # what a database restart or a failover does to the worker's sessions
        cursor.execute(
            "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
            " WHERE datname = current_database() AND application_name = %s",
            [WORKER_APPLICATION],
        )
        assert cursor.fetchone()[0] >= 1, "the worker kept a connection open between jobs"
    _embedded_by_the_worker(second)
