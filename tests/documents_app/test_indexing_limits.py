"""Indexing that cannot go on forever or crowd others out: a file over a limit fails with its reason, a
document whose runs were cut short twice fails instead of being handed out again (by its job or by the
rescue of stalled documents), a run over the time limit fails saying so, and one person's documents are
indexed one at a time while everyone else's go ahead."""

from datetime import timedelta

import pytest
from celery.exceptions import SoftTimeLimitExceeded
from django.utils import timezone

from documents_app import services, tasks
from documents_app.models import Document
from foundation import task_names
from tests.documents_app import files
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def queued(monkeypatch):
    """The jobs queued, instead of running them."""
    jobs: list[tuple[str, tuple]] = []
    monkeypatch.setattr(services, "enqueue", lambda name, *args: jobs.append((name, args)) or True)
    monkeypatch.setattr(
        tasks.index_document, "apply_async", lambda args, countdown: jobs.append(("later", (args, countdown)))
    )
    return jobs


def _upload(owner, name: str, data: bytes | None = None) -> Document:
    data = data if data is not None else f"# {name}\n\nThe {name} notes.".encode()
    return services.document_upload(owner=owner, filename=name, data=data, enqueue=False)[0]


def _claimed(document, *, seconds_ago: float, attempts: int = 0) -> None:
    Document.objects.filter(pk=document.pk).update(
        status="indexing", index_attempts=attempts, updated_at=timezone.now() - timedelta(seconds=seconds_ago)
    )


def test_a_pdf_bomb_fails_at_once_with_the_reason(queued):
    bomb = _upload(UserFactory(), "tiny.pdf", files.pdf_bomb(pages=20, stream_bytes=5 * 1024 * 1024))
    assert tasks.index_document(str(bomb.pk)) == "failed"
    bomb.refresh_from_db()
    assert "draw more than 32 MB of content" in bomb.error and bomb.index_attempts == 0
    assert queued == [], "not handed out again"


def test_a_docx_bomb_fails_at_once_naming_the_part(queued):
    bomb = _upload(UserFactory(), "letter.docx", files.docx_styles_bomb(styles_bytes=9 * 1024 * 1024))
    assert tasks.index_document(str(bomb.pk)) == "failed"
    assert "word/styles.xml unpacks to 9 MB" in Document.objects.get(pk=bomb.pk).error


def test_a_file_over_the_reading_budget_fails_with_the_budget_it_went_over(settings):
    settings.DOCUMENT_PDF_MAX_CONTENT_MB, settings.DOCUMENT_PARSE_CPU_S = 10**6, 1
    slow = _upload(UserFactory(), "slow.pdf", files.pdf_bomb(pages=8, stream_bytes=2 * 1024 * 1024))
    document = services.document_index(document_id=slow.pk)
    assert document.status == "failed"
    assert document.error.startswith("Reading the file took more than 1 s of computing time.")


def test_each_run_counts_as_an_attempt_and_a_finished_one_clears_the_count():
    document = _upload(UserFactory(), "a.md")
    _claimed(document, seconds_ago=3600, attempts=1)  # one run died already
    assert services.document_index(document_id=document.pk).status == "ready"
    assert Document.objects.get(pk=document.pk).index_attempts == 0


def test_a_document_whose_runs_were_cut_short_twice_fails_instead_of_running_again(queued, settings):
    settings.DOCUMENT_INDEX_MAX_ATTEMPTS = 2
    document = _upload(UserFactory(), "a.md")
    _claimed(document, seconds_ago=3600, attempts=2)  # two runs killed mid-way
    assert tasks.index_document(str(document.pk)) == "failed"
    document.refresh_from_db()
    assert document.error.startswith("Indexing was cut short 2 times")
    assert not document.nodes.exists() and queued == []


def test_indexing_asked_for_by_hand_gets_its_attempts_afresh(settings):
    settings.DOCUMENT_INDEX_MAX_ATTEMPTS = 2
    document = _upload(UserFactory(), "a.md")
    _claimed(document, seconds_ago=3600, attempts=2)
    assert services.document_index(document_id=document.pk).status == "ready"  # manage.py reindex --not-ready


def test_the_rescue_fails_a_stalled_document_that_used_up_its_attempts_and_queues_the_others(queued, settings):
    settings.DOCUMENT_INDEX_MAX_ATTEMPTS = 2
    owner = UserFactory()
    spent, again = _upload(owner, "spent.md"), _upload(owner, "again.md")
    _claimed(spent, seconds_ago=3600, attempts=2)
    _claimed(again, seconds_ago=3600, attempts=1)
    assert services.documents_rescue_stalled() == [again.pk]
    assert queued == [(task_names.DOCUMENT_INDEX, (str(again.pk),))]
    spent.refresh_from_db()
    assert spent.status == "failed" and spent.error.startswith("Indexing was cut short 2 times")


def test_asking_again_gives_a_failed_document_its_attempts_back():
    document = _upload(UserFactory(), "a.md")
    Document.objects.filter(pk=document.pk).update(status="failed", index_attempts=2)
    services.document_reindex(document=document)
    assert Document.objects.get(pk=document.pk).index_attempts == 0


def test_a_run_over_the_time_limit_fails_saying_so(monkeypatch, settings):
    settings.DOCUMENT_INDEX_TIME_LIMIT_S = 1800
    document = _upload(UserFactory(), "a.md")

    def interrupted(**kwargs):
        raise SoftTimeLimitExceeded()

    monkeypatch.setattr(services, "document_index", interrupted)
    assert tasks.index_document(str(document.pk)) == "failed"
    assert Document.objects.get(pk=document.pk).error.startswith("Indexing took longer than 30 minutes")


def test_a_persons_second_document_waits_for_their_first_while_anothers_goes_ahead(settings):
    settings.DOCUMENT_INDEX_PER_USER = 1
    busy, other = UserFactory(), UserFactory()
    first, second = _upload(busy, "first.md"), _upload(busy, "second.md")
    _claimed(first, seconds_ago=1)  # being indexed by a live run
    theirs = _upload(other, "theirs.md")  # waiting for a worker
    waiting = services.document_index(document_id=second.pk, redo_finished=False, fair=True)
    assert waiting.status == "pending" and waiting.index_attempts == 0
    assert services.document_index(document_id=theirs.pk, redo_finished=False, fair=True).status == "ready"
    Document.objects.filter(pk=first.pk).update(status="ready")
    assert services.document_index(document_id=second.pk, redo_finished=False, fair=True).status == "ready"


def test_while_nobody_else_waits_a_persons_short_documents_use_every_bulk_process(queued, settings):
    """One person's many short texts are indexed two at a time while nobody else's document waits; a long
    one still waits its turn, so does a PDF however small (it may unpack to megabytes), and a third text."""
    settings.DOCUMENT_INDEX_PER_USER, settings.DOCUMENT_INDEX_PER_USER_WHEN_IDLE = 1, 2
    settings.DOCUMENT_INDEX_SHORT_BYTES = 64 * 1024
    owner = UserFactory()
    first, second, third = (_upload(owner, f"{name}.md") for name in ("first", "second", "third"))
    manual = _upload(owner, "manual.md", b"# Manual\n\n" + b"The pump is primed before it starts. " * 3000)
    scan = _upload(owner, "scan.pdf", files.pdf_bomb(pages=2, stream_bytes=1024))  # a few KB, yet no text
    _claimed(first, seconds_ago=1)
    assert services.document_index(document_id=manual.pk, redo_finished=False, fair=True).status == "pending"
    assert services.document_index(document_id=scan.pk, redo_finished=False, fair=True).status == "pending"
    assert services.document_index(document_id=second.pk, redo_finished=False, fair=True).status == "ready"
    _claimed(second, seconds_ago=1)  # as if still being indexed beside the first
    assert services.document_index(document_id=third.pk, redo_finished=False, fair=True).status == "pending"


def test_once_someone_else_uploads_a_persons_extra_share_ends(queued, settings):
    settings.DOCUMENT_INDEX_PER_USER, settings.DOCUMENT_INDEX_PER_USER_WHEN_IDLE = 1, 2
    busy, other = UserFactory(), UserFactory()
    first, second = _upload(busy, "first.md"), _upload(busy, "second.md")
    _claimed(first, seconds_ago=1)
    _upload(other, "theirs.md")
    assert services.document_index(document_id=second.pk, redo_finished=False, fair=True).status == "pending"


def test_a_dead_runs_claim_does_not_hold_up_its_owners_other_documents(settings):
    settings.DOCUMENT_INDEX_STALE_S = 60
    owner = UserFactory()
    dead, waiting = _upload(owner, "dead.md"), _upload(owner, "next.md")
    _claimed(dead, seconds_ago=61)
    assert services.document_index(document_id=waiting.pk, redo_finished=False, fair=True).status == "ready"


def test_the_job_of_a_waiting_document_comes_back_later_the_later_the_further_back_in_line(queued, settings):
    settings.DOCUMENT_INDEX_DEFER_S = 2.0
    settings.DOCUMENT_INDEX_PER_USER = settings.DOCUMENT_INDEX_PER_USER_WHEN_IDLE = 1
    owner = UserFactory()
    running = _upload(owner, "running.md")
    line = [_upload(owner, f"waiting-{n}.md") for n in range(3)]
    _claimed(running, seconds_ago=1)
    assert [tasks.index_document(str(document.pk)) for document in line] == ["pending"] * 3
    assert queued == [
        ("later", ([str(document.pk)], delay)) for document, delay in zip(line, [2.0, 4.0, 6.0], strict=True)
    ]
    crowd = [_upload(owner, f"crowd-{n}.md") for n in range(40)]
    assert services.document_turn_in(document=crowd[-1]) == services.DOCUMENT_INDEX_DEFER_MAX_S


def test_a_finished_document_hands_its_owners_turn_to_their_next_one_at_once(queued, settings):
    """The next document in a person's line is queued the moment the one before is done, instead of the
    worker idling until the waiting document's own job comes back to look."""
    settings.DOCUMENT_INDEX_PER_USER = 1
    owner = UserFactory()
    first, second, _third = (_upload(owner, f"{name}.md") for name in ("first", "second", "third"))
    assert services.document_index(document_id=first.pk, redo_finished=False, fair=True).status == "ready"
    assert queued == [(task_names.DOCUMENT_INDEX, (str(second.pk),))], "the oldest waiting one, once"
    queued.clear()
    services.document_index(document_id=first.pk, redo_finished=False, fair=True)  # delivered again: done
    assert queued == [], "a job that found its document done passes no turn"
