"""Handing work to the Celery workers by task name, so that a service never imports the tasks that
call it back (a task calls its app's services; the services only know the task's registered name)."""

from __future__ import annotations

import logging

from celery import current_app
from django.db import transaction

logger = logging.getLogger(__name__)


def _task(task_name: str):
    tasks = current_app.tasks
    if task_name not in tasks:
        # A web process imports the apps' task modules the first time it queues something, the way a
        # worker does when it starts.
        current_app.loader.import_default_modules()
    return tasks[task_name]


def enqueue(task_name: str, *args: object) -> bool:
    """Queues ``task_name`` with ``args``; False (and logged) when the broker cannot take it, which must
    never fail the write that asked for it: every queued job has a way to catch up later."""
    try:
        _task(task_name).apply_async(args=args)
    except Exception:
        logger.exception("could not queue %s", task_name)
        return False
    return True


def enqueue_on_commit(task_name: str, *args: object) -> None:
    """Queues the task once the current transaction commits, so the worker finds the rows it needs."""
    transaction.on_commit(lambda: enqueue(task_name, *args))
