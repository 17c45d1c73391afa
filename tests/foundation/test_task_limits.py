"""The indexing job runs on the bulk queue under a time limit: interrupted (its document failing with the
reason) after DOCUMENT_INDEX_TIME_LIMIT_S, its process killed a grace period later if it does not stop."""

from django.conf import settings

from documents_app import tasks
from foundation import task_names
from foundation.celery import BULK_QUEUE, app


def test_the_indexing_job_has_a_soft_and_a_hard_time_limit():
    job = tasks.index_document
    assert job.name == task_names.DOCUMENT_INDEX
    assert job.soft_time_limit == settings.DOCUMENT_INDEX_TIME_LIMIT_S == 1800
    assert job.time_limit == settings.DOCUMENT_INDEX_TIME_LIMIT_S + settings.DOCUMENT_INDEX_KILL_GRACE_S
    assert job.acks_late and job.reject_on_worker_lost, "a killed run's job comes back, and is counted"


def test_indexing_runs_on_the_bulk_queue_only():
    assert app.conf.task_routes[task_names.DOCUMENT_INDEX] == {"queue": BULK_QUEUE}
