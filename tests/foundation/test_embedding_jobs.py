"""Who embeds what: the few rows a turn or a commit writes go to the interactive workers, a bulk write's
rows (and its session's commit and summary) to the bulk workers, in jobs small enough that several
people's imports take turns there, so that one person's import never delays another person's new turn."""

from datetime import timedelta

import pytest
from django.db import connection
from django.utils import timezone

from foundation import task_names, tasks
from foundation.celery import BULK_QUEUE, INTERACTIVE_QUEUE, app
from foundation.embedding import embeddings_catch_up
from sessions_app.models import Message
from sessions_app.services import messages
from tests.factories import ChatSessionFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def queued(monkeypatch):
    """The jobs queued once their transaction commits, instead of sending them."""
    jobs: list[tuple[str, tuple]] = []
    monkeypatch.setattr(tasks, "enqueue_on_commit", lambda name, *args: jobs.append((name, args)))
    return jobs


def _post(auth_client, session, count: int):
    messages = [
        {"role": "user" if n % 2 == 0 else "assistant", "content": f"Turn {n} of the story."} for n in range(count)
    ]
    response = auth_client.post(f"/api/sessions/{session.id}/messages", {"messages": messages}, format="json")
    assert response.status_code == 201, response.content


def test_a_turn_is_embedded_by_the_interactive_workers(auth_client, user, queued):
    _post(auth_client, ChatSessionFactory(owner=user), 2)
    assert [(name, args[0], len(args[1])) for name, args in queued] == [(task_names.EMBED_ROWS, "messages", 2)]


def test_what_the_product_wrote_itself_sets_off_no_embedding_job(auth_client, user, queued):
    session = ChatSessionFactory(owner=user)
    said = messages.NewMessage(role="user", content="Which ticket tracks the timezone bug?")
    quoted = messages.NewMessage(role="assistant", content="OPS-7 tracks it.", metadata={"source": "retrieved"})
    system = messages.NewMessage(role="system", content="Be brief.")

    messages.message_bulk_create(session=session, messages=[said])
    messages.message_bulk_create(session=session, messages=[quoted])
    messages.message_bulk_create(session=session, messages=[system])

    asked = Message.objects.get(session=session, role="user")
    assert queued == [(task_names.EMBED_ROWS, ("messages", [asked.pk]))]


def test_a_long_history_posted_at_once_is_embedded_by_the_bulk_workers_in_small_jobs(auth_client, user, queued):
    _post(auth_client, ChatSessionFactory(owner=user), 100)
    assert {name for name, _ in queued} == {task_names.EMBED_ROWS_BULK}
    sizes = [len(args[1]) for _, args in queued]
    assert sizes == [32, 32, 32, 4], "every row once, in jobs of at most 32"


def test_the_two_kinds_of_job_go_to_their_own_queues():
    app.loader.import_default_modules()
    routes = app.conf.task_routes
    assert routes[task_names.EMBED_ROWS_BULK]["queue"] == BULK_QUEUE
    assert task_names.EMBED_ROWS not in routes and app.conf.task_default_queue == INTERACTIVE_QUEUE


@pytest.fixture
def session_jobs(monkeypatch):
    """The jobs a write of messages sets off for its session (commit, summary), instead of sending them."""
    jobs: list[str] = []
    monkeypatch.setattr(messages, "enqueue_on_commit", lambda name, *args: jobs.append(name))
    return jobs


@pytest.mark.parametrize(
    ("count", "commit", "fold"),
    [
        (4, task_names.SESSION_AUTO_COMMIT, task_names.SESSION_FOLD_HISTORY),
        (500, task_names.SESSION_AUTO_COMMIT_BULK, task_names.SESSION_FOLD_HISTORY_BULK),
    ],
)
def test_an_imported_historys_commit_and_summary_are_bulk_work_and_a_turns_are_not(
    auth_client, user, queued, session_jobs, settings, count, commit, fold
):
    settings.AUTO_COMMIT_TURNS, settings.HISTORY_MAX_TURNS = 4, 1
    _post(auth_client, ChatSessionFactory(owner=user), count)
    assert session_jobs == [commit, fold]
    routes = app.conf.task_routes
    bulk = count > tasks.LIVE_EMBED_MAX_ROWS
    assert all((routes.get(name, {}).get("queue") == BULK_QUEUE) is bulk for name in session_jobs)


def test_what_the_product_wrote_itself_is_never_embedded_nor_waited_for(
    auth_client, library, django_capture_on_commit_callbacks
):
    """A built-in answer quotes passages: recall leaves it out, so a vector of it would only crowd the
    index (the same answer given a hundred times is a hundred identical vectors)."""
    with django_capture_on_commit_callbacks(execute=True):  # the jobs run, as a worker would run them
        response = auth_client.post(
            "/api/ai/chat", {"message": "How often should I descale the kettle?"}, format="json"
        )
    assert response.status_code == 200, response.content
    question, answer = Message.objects.filter(session_id=response.json()["session_id"]).order_by("seq")
    assert question.embedding is not None, "what the person said is found by meaning"
    assert answer.metadata["source"] == "retrieved" and answer.embedding is None
    Message.objects.filter(pk=answer.pk).update(created_at=timezone.now() - timedelta(hours=1))
    assert embeddings_catch_up(older_than_s=0).get("messages", 0) == 0, "nothing is waiting for a vector"
    waiting = Message.objects.said().filter(embedding__isnull=True, created_at__lt=timezone.now())
    with connection.cursor() as cursor:
        # A table this small may be read whole, or through whichever index the statistics earlier tests
        # left make look cheapest: what matters is that the partial index can answer the catch-up's query
        # in its order at all, which it must on a large table. Fresh statistics, and no plan but an
        # ordered index scan.
        cursor.execute(f"ANALYZE {Message._meta.db_table}")
        cursor.execute("SET LOCAL enable_seqscan = off")
        cursor.execute("SET LOCAL enable_bitmapscan = off")
        cursor.execute("SET LOCAL enable_sort = off")
    assert "Index Scan using message_unembedded_idx" in waiting.order_by("pk")[:256].explain()
