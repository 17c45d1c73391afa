"""One retry policy per kind of failure, defined once: a job that calls the embedding model retries the same
way wherever it lives, and every publish to the broker follows Celery's one setting."""

import threading
import time

import pytest
from django.conf import settings

from foundation import task_names
from foundation.ai import EmbeddingError
from foundation.celery import app
from foundation.tasks import EMBEDDING_RETRY

EMBEDDING_JOBS = (
    task_names.EMBED_ROWS,
    task_names.EMBED_ROWS_BULK,
    task_names.BACKFILL_EMBEDDINGS,
    task_names.DOCUMENT_INDEX,
    task_names.DOCUMENT_EMBED_TITLE,
)


@pytest.mark.parametrize("name", EMBEDDING_JOBS)
def test_every_job_that_calls_the_embedding_model_retries_with_the_one_policy(name):
    app.loader.import_default_modules()
    job = app.tasks[name]
    assert job.autoretry_for == (EmbeddingError,)
    assert (job.retry_backoff, job.retry_backoff_max, job.max_retries) == (
        EMBEDDING_RETRY["retry_backoff"],
        EMBEDDING_RETRY["retry_backoff_max"],
        EMBEDDING_RETRY["max_retries"],
    )


@pytest.mark.filterwarnings("ignore::celery.exceptions.AlwaysEagerIgnored")  # tests run jobs inline; this sends
def test_a_publish_to_a_broker_that_is_down_gives_up_at_once():
    assert app.conf.task_publish_retry_policy == settings.CELERY_TASK_PUBLISH_RETRY_POLICY
    down = app.connection_for_write("redis://127.0.0.1:1/0")  # nothing listens on port 1
    started = time.monotonic()
    with pytest.raises(Exception), down:  # noqa: B017 (kombu or redis-py, whichever wraps it)
        app.send_task(task_names.SEND_QUEUED_TASKS, connection=down, ignore_result=True)
    # Celery's default policy would try three more times, 0.2 s apart; the one retry is immediate.
    assert time.monotonic() - started < 0.5


def test_requests_publish_through_the_process_s_one_result_backend():
    """Each request runs in a thread of its own: a backend built for each would cost each request's first
    publish milliseconds (redis-py reads its package's metadata to build one)."""
    seen = []
    for _ in range(2):
        request = threading.Thread(target=lambda: seen.append(app.backend))
        request.start()
        request.join()
    assert seen[0] is seen[1] is app.backend
