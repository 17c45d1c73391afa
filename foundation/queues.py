"""Handing work to the Celery workers by task name, so that a service never imports the tasks that
call it back (a task calls its app's services; the services only know the task's registered name).

The broker (Redis) may be down while PostgreSQL is not. A request must then neither wait for it nor
lose the work it asked for: a job the broker refuses is kept in the database (``QueuedTask``) and
sent by a worker's sweep once the broker answers again (``queued_tasks_send``, run by every worker
when it connects to the broker and every minute after).
"""

from __future__ import annotations

import logging
import threading
import time

import redis
from celery import current_app
from django.db import transaction
from kombu.exceptions import OperationalError

from foundation.models import QueuedTask

logger = logging.getLogger(__name__)

# After a refused publish, this process keeps jobs in the database without trying the broker for this
# long: a request queues several jobs, and none of them should pay for another connect attempt.
BROKER_BACKOFF_S = 5.0
SWEEP_BATCH = 100
# What a publish raises when the broker cannot be reached (kombu wraps most of redis-py's errors).
BROKER_DOWN = (OperationalError, redis.ConnectionError, redis.TimeoutError)

_broker_down_until = 0.0


_registering = threading.Lock()


def tasks_register() -> int:
    """Imports the apps' task modules, the way a worker does when it starts; how many tasks are known.

    A web process does it as it warms up (``foundation.warmup``), or else the first time it queues
    something: once, under a lock, since two requests racing here (two uploads at once on a fresh server)
    would otherwise see a half-registered set and lose a job as "not registered". It costs about a second
    of processor (Celery checks the project's models and URLs as it imports them), which nobody's turn
    should wait for."""
    with _registering:
        if not _registered.is_set():
            current_app.loader.import_default_modules()
            _registered.set()
    return len(current_app.tasks)


_registered = threading.Event()


def _task(task_name: str):
    tasks = current_app.tasks
    if task_name not in tasks:
        tasks_register()
    return tasks[task_name]


def _publish(task_name: str, args: tuple | list) -> None:
    # Nobody waits on a queued job's result: without ignore_result, Celery would first subscribe to
    # the result in Redis, and while Redis is down that subscription alone retries for 20 s. How often the
    # publish itself is tried is Celery's task_publish_retry_policy (settings).
    _task(task_name).apply_async(args=tuple(args), ignore_result=True)


def enqueue(task_name: str, *args: object) -> bool:
    """Queues ``task_name`` with ``args``. True if the broker took it; False if it is kept in the
    database for a worker to send later (the broker is down). Never fails the write that asked for it."""
    global _broker_down_until
    if time.monotonic() >= _broker_down_until:
        try:
            _publish(task_name, args)
        except BROKER_DOWN as exc:
            _broker_down_until = time.monotonic() + BROKER_BACKOFF_S
            logger.warning("could not queue %s (%s); kept in the database until the broker is back", task_name, exc)
        except Exception:  # whatever it was, the job is kept: the sweep tries again, and logs what it drops
            logger.exception("could not queue %s; kept in the database for the next sweep", task_name)
        else:
            return True
    QueuedTask.objects.create(task=task_name, args=list(args))
    return False


def enqueue_on_commit(task_name: str, *args: object) -> None:
    """Queues the task once the current transaction commits, so the worker finds the rows it needs."""
    transaction.on_commit(lambda: enqueue(task_name, *args))


def queued_tasks_send() -> int:
    """Sends the jobs kept while the broker was down, oldest first, and returns how many it sent.

    Stops at the first the broker refuses (it is still down; the next sweep goes on). Each batch is
    locked, so two workers sweeping at once send each job once; a job sent whose deletion is then lost
    (a crash right between) is sent again later, which every task tolerates (they are idempotent).
    """
    sent = 0
    while True:
        refused = False
        with transaction.atomic():
            batch = list(QueuedTask.objects.select_for_update(skip_locked=True).order_by("id")[:SWEEP_BATCH])
            done, published = [], 0
            for row in batch:
                try:
                    _publish(row.task, row.args)
                    published += 1
                except BROKER_DOWN as exc:
                    logger.warning("the broker still refuses queued jobs (%s)", exc)
                    refused = True
                    break
                except Exception:  # never sendable (a task since renamed): it must not block the rest
                    logger.exception("dropping the queued job %s", row)
                done.append(row.pk)
            QueuedTask.objects.filter(pk__in=done).delete()
        sent += published
        if refused or len(batch) < SWEEP_BATCH:
            if sent:
                logger.info("sent %d job(s) kept while the broker was down", sent)
            return sent


def queued_tasks_forget(*, tasks: frozenset[str], first_arg: str) -> int:
    """Drops the jobs kept for the workers that name a deleted row as their first argument (a session,
    a document): they would find nothing, and must not keep its id; how many went."""
    deleted, _ = QueuedTask.objects.filter(task__in=tasks, args__0=first_arg).delete()
    return deleted
