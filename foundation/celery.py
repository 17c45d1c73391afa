"""The Celery application; tasks live in each app's ``tasks`` module."""

import errno
import logging
import os
import time
from pathlib import Path

import redis
from celery import Celery
from celery.signals import before_task_publish, celeryd_init, task_postrun, worker_ready
from django.conf import settings
from kombu.transport import redis as kombu_redis

from foundation import task_names
from foundation.connections import release_database_connections

# Two queues, each with workers of its own, so that a bulk ingest never delays what a person is
# waiting for: interactive work (embedding messages and queries, auto-commit, folding summaries)
# and bulk work (indexing documents, backfills).
INTERACTIVE_QUEUE, BULK_QUEUE = "interactive", "bulk"
QUEUES = (INTERACTIVE_QUEUE, BULK_QUEUE)
# A header every task message carries: when it was sent (epoch seconds), so that the health check can
# tell how long the oldest task in a queue has been waiting.
SENT_AT_HEADER = "recollect_sent_at"

logger = logging.getLogger(__name__)


class _RedisChannel(kombu_redis.Channel):
    # Overrides a private method of kombu's Redis transport (kombu.transport.redis.Channel._connparams,
    # as pinned: kombu 5.7.0), which reads its connection's address without checking that the connection
    # is still there. tests/foundation/test_broker_transport.py pins that kombu still fails so; once that
    # test fails, kombu handles it and this class can go.
    def _connparams(self, asynchronous: bool = False) -> dict:
        # When Redis goes away while a worker holds an unacknowledged message, kombu closes the channel
        # a second time after its connection was already let go, and reading that connection's address
        # raised AttributeError, which ended the worker. Reported as what it is, a lost connection, the
        # worker reconnects instead (the message comes back from Redis after the visibility timeout).
        if self.connection is None or self.connection.client is None:
            raise redis.ConnectionError("the connection to the broker is closed")
        return super()._connparams(asynchronous=asynchronous)

    # The client messages are published with, and the connection pool it borrows from.
    _publishing: tuple[redis.ConnectionPool, redis.Redis] | None = None

    def _create_client(self, asynchronous: bool = False) -> redis.Redis:
        # kombu builds a new Redis client for every message it publishes, filling the client's table of
        # about 170 reply handlers each time: a fifth of a publish's processor, and a turn publishes four
        # or five jobs. A client is safe to reuse (it borrows a connection from the pool for each
        # command), so one serves while the channel's pool is the same.
        if asynchronous:
            return super()._create_client(asynchronous=True)
        pool = self.pool
        if self._publishing is None or self._publishing[0] is not pool:
            self._publishing = (pool, super()._create_client())
        return self._publishing[1]


class RedisTransport(kombu_redis.Transport):
    """kombu's Redis transport, surviving the loss of Redis while a task is unacknowledged."""

    Channel = _RedisChannel


app = Celery("recollect")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.task_default_queue = INTERACTIVE_QUEUE
app.conf.task_routes = {name: {"queue": BULK_QUEUE} for name in task_names.BULK_TASKS}
app.autodiscover_tasks()
# The foundation's embedding jobs live below an app rather than in one.
app.autodiscover_tasks(["foundation"])


@app.on_after_configure.connect
def _periodic_jobs(sender, **kwargs) -> None:
    """What runs on a clock, under Celery's beat scheduler (one ``celery beat`` per site, which the run
    command starts too): queuing again the documents whose indexing run died; deleting the search traces
    past their retention."""
    sender.add_periodic_task(
        settings.DOCUMENT_RESCUE_INTERVAL_S, sender.signature(task_names.DOCUMENTS_RESCUE_STALLED), name="rescue"
    )
    sender.add_periodic_task(
        settings.SEARCH_TRACE_PRUNE_INTERVAL_S, sender.signature(task_names.SEARCH_TRACES_PRUNE), name="prune traces"
    )


@celeryd_init.connect
def _yield_to_people(sender=None, options=None, **kwargs) -> None:
    """Lowers the worker's priority (its pool processes inherit it) to its queues' niceness, the least of
    them when it serves several: background work takes the processor when people's requests leave it."""
    niceness = worker_niceness((options or {}).get("queues"))
    current = os.nice(0)
    if niceness > current:  # never raised above what the worker was started with (systemd's Nice=, say)
        os.nice(niceness - current)
        logger.info("worker niceness %d", niceness)
    _lower_session_group(niceness)


# Linux shares the processor between sessions first (autogroups, on wherever the kernel enables them)
# and by niceness only inside a session: a worker started in a session of its own (as the run command
# starts each process) at niceness 10 still took as much of the processor as a web process, and in a
# burst of chats a bulk job held half a core while people waited for their first word.
AUTOGROUP = Path("/proc/self/autogroup")
AUTOGROUP_ATTEMPTS = 5


def _lower_session_group(niceness: int) -> None:
    """Gives the worker's session the worker's niceness, when the worker leads that session (it then
    holds only the worker and its pool; a shell's session is left alone) and the kernel groups by session."""
    if niceness <= 0 or os.getsid(0) != os.getpid():
        return
    for attempt in range(AUTOGROUP_ATTEMPTS):
        try:
            if session_group_niceness() < niceness:
                AUTOGROUP.write_text(str(niceness))
        except ValueError:  # not the format expected: niceness alone applies
            return
        except OSError as exc:
            # The kernel refuses changes that come too close together (two workers starting at once).
            if exc.errno == errno.EAGAIN and attempt + 1 < AUTOGROUP_ATTEMPTS:
                time.sleep(0.2)
                continue
            if exc.errno != errno.ENOENT:  # no autogroups here: niceness alone applies, nothing to say
                logger.warning("could not lower the worker's session priority: %s", exc)
            return
        logger.info("worker session niceness %d", niceness)
        return


def session_group_niceness(pid: int | str = "self") -> int:
    """The niceness of a process's session group (``/proc/<pid>/autogroup``: "/autogroup-N nice K").
    Raises OSError where the kernel has none."""
    return int(Path(f"/proc/{pid}/autogroup").read_text().split()[-1])


def worker_niceness(queues) -> int:
    """The niceness (0 to 19) of a worker serving ``queues`` (a list, a comma-separated string, or none:
    every queue): how much it yields to the web processes."""
    names = queues.split(",") if isinstance(queues, str) else list(queues or QUEUES)
    return min((settings.WORKER_NICENESS.get(name.strip(), 0) for name in names), default=0)


@worker_ready.connect
def _rescue_documents_after_start(sender, **kwargs) -> None:
    """A worker starting may be the one restarted after being killed mid-task: once the claims of what it
    was indexing have gone stale, those documents are queued again (the broker would hold the killed
    worker's jobs for hours). Run as a job, so this process never opens a database connection that its
    forked pool processes would share."""
    sender.app.send_task(task_names.DOCUMENTS_RESCUE_STALLED, countdown=settings.DOCUMENT_INDEX_STALE_S + 5)


@task_postrun.connect
def _hand_back_connections(sender=None, **kwargs) -> None:
    """A job's connections go back to the worker's pool as it ends, for the next job to reuse (see
    CELERY_DB_REUSE_MAX); a connection left unusable is discarded by the pool's check on handing it out.
    A job run inline belongs to its caller's connection and transaction, which are left alone."""
    if not getattr(getattr(sender, "request", None), "is_eager", False):
        release_database_connections()


@before_task_publish.connect
def _stamp_sent_at(headers=None, **kwargs) -> None:
    if headers is not None:
        headers.setdefault(SENT_AT_HEADER, time.time())
