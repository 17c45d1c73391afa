"""The claim on a document being indexed: a live run keeps it, a dead run's claim goes stale and is taken
over, a job delivered again while the dead run's claim still looks fresh waits for it instead of being
dropped, and a job delivered after its document is done leaves it alone."""

from datetime import timedelta

import pytest
from django.utils import timezone

from documents_app import services, tasks
from documents_app.models import Document, DocumentNode
from foundation import task_names
from foundation.models import ModelCall
from tests.factories import UserFactory
from tests.samples import MARKDOWN

pytestmark = pytest.mark.django_db


@pytest.fixture
def document():
    document, _ = services.document_upload(owner=UserFactory(), filename="a.md", data=MARKDOWN, enqueue=False)
    return document


@pytest.fixture
def queued(monkeypatch):
    """The jobs queued, instead of running them."""
    jobs: list[tuple[str, tuple]] = []
    monkeypatch.setattr(services, "enqueue", lambda name, *args: jobs.append((name, args)) or True)
    monkeypatch.setattr(tasks.index_document, "apply_async", lambda args, countdown: jobs.append(("later", countdown)))
    return jobs


def _claimed(document, seconds_ago: float) -> None:
    Document.objects.filter(pk=document.pk).update(
        status="indexing", updated_at=timezone.now() - timedelta(seconds=seconds_ago)
    )


def test_a_job_finding_a_fresh_claim_looks_again_when_it_would_be_stale(document, queued, settings):
    settings.DOCUMENT_INDEX_STALE_S = 60
    _claimed(document, seconds_ago=20)  # a worker killed 20 s ago, its job handed out again at once
    assert tasks.index_document(str(document.pk)) == "indexing"
    ((kind, countdown),) = queued
    assert kind == "later" and 40 < countdown <= 41 + tasks.CLAIM_RECHECK_MARGIN_S
    assert not DocumentNode.objects.filter(document=document).exists()


def test_a_stale_claim_is_taken_over_and_the_document_indexed(document, queued, settings):
    settings.DOCUMENT_INDEX_STALE_S = 60
    _claimed(document, seconds_ago=61)
    assert tasks.index_document(str(document.pk)) == "ready"
    assert queued == []
    nodes = DocumentNode.objects.filter(document=document)
    assert nodes.count() == Document.objects.get(pk=document.pk).node_count > 0


def test_a_job_delivered_again_after_its_document_is_done_leaves_it(document, queued):
    services.document_index(document_id=document.pk)
    uris = set(DocumentNode.objects.values_list("uri", flat=True))
    calls = ModelCall.objects.count()
    assert tasks.index_document(str(document.pk)) == "ready"
    assert set(DocumentNode.objects.values_list("uri", flat=True)) == uris
    assert ModelCall.objects.count() == calls, "nothing was embedded or summarised again"
    assert queued == []


def test_indexing_again_replaces_the_nodes_never_duplicates_them(document):
    first = services.document_index(document_id=document.pk)
    again = services.document_index(document_id=document.pk)  # e.g. manage.py reindex
    assert again.status == "ready" and again.node_count == first.node_count
    assert DocumentNode.objects.filter(document=document).count() == first.node_count


def test_the_rescue_queues_only_documents_whose_claim_went_stale(queued, settings):
    settings.DOCUMENT_INDEX_STALE_S = 60
    owner = UserFactory()
    dead, live, pending = (
        services.document_upload(owner=owner, filename=f"{name}.md", data=f"# {name}\n\nText.".encode())[0]
        for name in ("dead", "live", "pending")
    )
    _claimed(dead, seconds_ago=300)
    _claimed(live, seconds_ago=5)
    assert services.documents_rescue_stalled() == [dead.pk]
    assert queued == [(task_names.DOCUMENT_INDEX, (str(dead.pk),))]
    assert Document.objects.get(pk=dead.pk).status == "pending"
    assert Document.objects.get(pk=live.pk).status == "indexing"
    assert Document.objects.get(pk=pending.pk).status == "pending"
    assert services.documents_rescue_stalled() == [], "queued once, not at every round"


def test_a_rescue_the_broker_refuses_leaves_the_document_for_the_next_round(document, monkeypatch):
    _claimed(document, seconds_ago=3600)
    monkeypatch.setattr(services, "enqueue", lambda name, *args: False)
    assert services.documents_rescue_stalled() == []
    assert Document.objects.get(pk=document.pk).status == "indexing"
    monkeypatch.setattr(services, "enqueue", lambda name, *args: True)
    assert services.documents_rescue_stalled() == [document.pk]
