"""The Celery application; tasks live in each app's ``tasks`` module."""

from celery import Celery

# Two queues, each with workers of its own, so that a bulk ingest never delays what a person is
# waiting for: interactive work (embedding messages and queries, auto-commit, folding summaries)
# and bulk work (indexing documents, backfills).
INTERACTIVE_QUEUE, BULK_QUEUE = "interactive", "bulk"
BULK_TASKS = ("documents.index_document", "core.backfill_embeddings")

app = Celery("recollect")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.conf.task_default_queue = INTERACTIVE_QUEUE
app.conf.task_routes = {name: {"queue": BULK_QUEUE} for name in BULK_TASKS}
app.autodiscover_tasks()
# The foundation's embedding jobs live below an app rather than in one.
app.autodiscover_tasks(["retrieval_app.core"])
