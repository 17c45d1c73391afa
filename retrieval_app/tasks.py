"""Retrieval runs inside the request it answers; the vectors it searches are made by the foundation's
embedding tasks and the apps' indexing tasks. What runs here is housekeeping: the search traces past
their retention are deleted (on the beat scheduler's clock, on the bulk workers)."""

from __future__ import annotations

from datetime import timedelta

from celery import shared_task
from django.conf import settings
from django.utils import timezone

from foundation import task_names
from retrieval_app.traces import search_traces_prune


@shared_task(name=task_names.SEARCH_TRACES_PRUNE)
def prune_traces() -> int:
    """Deletes the search traces older than SEARCH_TRACE_RETENTION_DAYS (none when it is 0); how many."""
    days = settings.SEARCH_TRACE_RETENTION_DAYS
    if days <= 0:
        return 0
    return search_traces_prune(before=timezone.now() - timedelta(days=days))
