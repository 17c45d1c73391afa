"""The workers' embedding jobs, for every kind of row an app registered (see ``embedding``). They take
ids, re-fetch the rows and are idempotent. And the sweep, run by every worker, that sends the jobs kept
in the database while the broker was down (see ``queues``) and embeds rows whose job was lost."""

from __future__ import annotations

import gc
import logging

from celery import bootsteps, shared_task
from celery.signals import worker_init, worker_process_init
from django.conf import settings

from foundation import embedding, task_names
from foundation.ai import EmbeddingError
from foundation.celery import app
from foundation.queues import enqueue_on_commit, queued_tasks_send
from foundation.warmup import collector_settle, model_warm

logger = logging.getLogger(__name__)

# Besides each (re)connection to the broker, a worker sweeps this often: a web process that found
# the broker down keeps its jobs in the database for a few seconds more, maybe after the worker's sweep.
SWEEP_INTERVAL_S = 60.0
# How every job that calls the embedding model retries when the model fails: Celery's own autoretry,
# after about 5 s, then twice as long each time up to 5 minutes (with jitter), at most six retries.
EMBEDDING_RETRY = {"autoretry_for": (EmbeddingError,), "retry_backoff": 5, "retry_backoff_max": 300, "max_retries": 6}


@shared_task(name=task_names.EMBED_ROWS, **EMBEDDING_RETRY)
def embed_rows(kind: str, ids: list) -> int:
    """Embeds these rows of one kind (``messages``, ``archives``, ``memories``...)."""
    return embedding.embed_ids(kind=kind, ids=ids)


@shared_task(name=task_names.EMBED_ROWS_BULK, **EMBEDDING_RETRY)
def embed_rows_bulk(kind: str, ids: list) -> int:
    """The same for rows written in bulk, on the bulk workers (``embed_later``)."""
    return embedding.embed_ids(kind=kind, ids=ids)


@shared_task(name=task_names.BACKFILL_EMBEDDINGS, **EMBEDDING_RETRY)
def backfill_embeddings(batch_size: int = 64, restale: bool = False) -> dict[str, int]:
    """Embeds every registered row still without a vector from the configured model."""
    return embedding.embeddings_backfill(batch_size=batch_size, restale=restale)


# A write of more rows than this (an import, a long history posted at once) is bulk work: its rows are
# embedded by the bulk workers, so that what people are saying now is embedded first, whoever imports.
LIVE_EMBED_MAX_ROWS = 16
# Rows a job embeds at most: about a second of the local model for the longest turns, so that on the
# bulk workers the jobs of several people's imports take turns rather than wait behind a whole import.
EMBED_JOB_MAX_ROWS = 32


def is_bulk_write(rows: int) -> bool:
    """Whether a write of ``rows`` rows is bulk work: it, and what it sets off (embedding, and for a
    conversation its commit and its summary), goes to the bulk workers."""
    return rows > LIVE_EMBED_MAX_ROWS


def embed_later(*, kind: str, ids: list) -> None:
    """Embeds the rows in a worker once the current transaction commits; a broker outage loses
    nothing (the job waits in the database, see ``queues``). A few rows (what a turn or a commit writes)
    go to the interactive workers; more go to the bulk workers, in jobs of EMBED_JOB_MAX_ROWS."""
    ids = list(ids)
    if not ids:
        return
    task = task_names.EMBED_ROWS_BULK if is_bulk_write(len(ids)) else task_names.EMBED_ROWS
    for start in range(0, len(ids), EMBED_JOB_MAX_ROWS):
        enqueue_on_commit(task, kind, ids[start : start + EMBED_JOB_MAX_ROWS])


@shared_task(name=task_names.SEND_QUEUED_TASKS)
def send_queued_tasks() -> int:
    """Sends the jobs kept in the database while the broker was down, then embeds what a job lost with
    the broker left without a vector (a few hundred rows of each kind at most per sweep)."""
    sent = queued_tasks_send()
    try:
        embedding.embeddings_catch_up()
    except EmbeddingError as exc:  # the model is down: the rows wait for the next sweep
        logger.warning("could not catch up on embeddings: %s", exc)
    return sent


class QueuedTasksSweep(bootsteps.StartStopStep):
    """Queues the sweep whenever the worker (re)connects to the broker, the moment a Redis outage ends,
    and every SWEEP_INTERVAL_S after. Only a message is sent from here (the worker's main process): the
    sweep itself reads the database in a pool process, like any task."""

    requires = ("celery.worker.consumer.tasks:Tasks",)

    def __init__(self, parent, **kwargs) -> None:
        super().__init__(parent, **kwargs)
        self.timer_entry = None

    def start(self, parent) -> None:
        self._queue_sweep(parent)
        self.timer_entry = parent.timer.call_repeatedly(SWEEP_INTERVAL_S, self._queue_sweep, (parent,))

    def stop(self, parent) -> None:
        if self.timer_entry is not None:
            self.timer_entry.cancel()
            self.timer_entry = None

    def _queue_sweep(self, parent) -> None:
        try:
            parent.app.send_task(task_names.SEND_QUEUED_TASKS, ignore_result=True)
        except Exception as exc:  # the broker went away again: the next connection queues it
            logger.warning("could not queue the sweep of kept jobs: %s", exc)


# A worker imports this module before it builds its consumer, so the step is part of every worker.
app.steps["consumer"].add(QueuedTasksSweep)


@worker_init.connect
def _set_aside_before_forking(**kwargs) -> None:
    """A worker's main process sets what it holds aside from the collector before it forks its pool
    processes: their collections then never walk, and so never copy, the memory they share with it."""
    if settings.WARM_UP_AT_START:
        gc.freeze()


@worker_process_init.connect
def _warm_up_the_model(**kwargs) -> None:
    """Each pool process loads the embedding model as it starts, not with the first turn it embeds (a
    second's wait for the first person after a start), then sets what it holds aside from the collector."""
    if settings.WARM_UP_AT_START:
        model_warm()
        collector_settle()
