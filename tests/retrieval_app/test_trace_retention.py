"""Search traces are kept for SEARCH_TRACE_RETENTION_DAYS, then deleted by a job on the beat scheduler's clock."""

from __future__ import annotations

from datetime import timedelta

import pytest
from django.utils import timezone

from foundation import task_names
from foundation.celery import app
from retrieval_app.models import SearchTrace
from retrieval_app.tasks import prune_traces
from retrieval_app.traces import search_traces_prune
from tests.factories import SearchTraceFactory, UserFactory

pytestmark = pytest.mark.django_db


def _aged(user, days: float) -> SearchTrace:
    return SearchTraceFactory(owner=user, query=f"{days} days old", created_at=timezone.now() - timedelta(days=days))


def test_traces_past_their_retention_are_deleted_and_the_rest_kept(user, settings):
    settings.SEARCH_TRACE_RETENTION_DAYS = 30
    other_user = UserFactory()
    old = [_aged(user, 45), _aged(other_user, 31)]
    kept = [_aged(user, 29), _aged(other_user, 1), _aged(user, 0)]
    assert prune_traces() == len(old)
    assert set(SearchTrace.objects.values_list("id", flat=True)) == {trace.id for trace in kept}


def test_a_retention_of_zero_keeps_every_trace(user, settings):
    settings.SEARCH_TRACE_RETENTION_DAYS = 0
    _aged(user, 4000)
    assert prune_traces() == 0
    assert SearchTrace.objects.count() == 1


def test_pruning_goes_batch_by_batch_until_none_is_left(user):
    for days in range(40, 47):
        _aged(user, days)
    recent = _aged(user, 2)
    assert search_traces_prune(before=timezone.now() - timedelta(days=30), batch=3) == 7
    assert list(SearchTrace.objects.values_list("id", flat=True)) == [recent.id]


def test_the_beat_scheduler_runs_the_pruning_on_its_clock(settings):
    app.loader.import_default_modules()
    app.finalize()
    scheduled = {entry["task"]: entry for entry in app.conf.beat_schedule.values()}
    assert task_names.SEARCH_TRACES_PRUNE in scheduled
    assert scheduled[task_names.SEARCH_TRACES_PRUNE]["schedule"] == settings.SEARCH_TRACE_PRUNE_INTERVAL_S
