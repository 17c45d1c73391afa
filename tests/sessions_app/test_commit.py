"""Commit: archives with L0/L1, no-ops that say so, concurrency, memories that merge by key, injected
text never re-extracted, auto-commit, and deletes that take a session's own memories with it."""

import threading
import time

import pytest
from django.db import close_old_connections

from sessions_app import services
from sessions_app.models import Archive, ChatSession, Memory, Message
from tests.factories import ChatSessionFactory, UserFactory

pytestmark = pytest.mark.django_db

SLOW_MODEL_S = 30  # how long the slow model below keeps a commit waiting, at the most

FIRST_SESSION = [
    ("user", "Hi, my name is Dana Whitfield. I live in Lyon and I prefer short answers."),
    ("assistant", "Hello Dana! What can I do for you?"),
    ("user", "Our nightly export job fails with an out of memory error."),
    ("assistant", "Raise the worker memory limit to 2 GB and split the export into daily files."),
]


def _say(session, turns):
    return services.message_bulk_create(
        session=session, messages=[services.NewMessage(role=r, content=c) for r, c in turns]
    )


def _post(client, session, turns):
    return client.post(
        f"/api/sessions/{session.id}/messages",
        {"messages": [{"role": r, "content": c} for r, c in turns]},
        format="json",
    )


def test_commit_archives_the_turns_with_an_abstract_and_a_structured_overview(auth_client, user):
    session = ChatSessionFactory(owner=user)
    _post(auth_client, session, FIRST_SESSION)
    body = auth_client.post(f"/api/sessions/{session.id}/commit", {}, format="json").json()

    archive = body["archive"]
    assert body["committed"] is True
    assert archive["uri"] == f"viking://session/{session.id}/history/archive_001"
    assert archive["index"] == 1 and archive["message_count"] == 4
    assert (archive["first_seq"], archive["last_seq"]) == (1, 4)
    assert "\n" not in archive["abstract"] and archive["abstract"]
    assert "Intent: Our nightly export job fails with an out of memory error." in archive["overview"]
    assert "Outcome: Raise the worker memory limit to 2 GB" in archive["overview"]
    sections = archive["overview_sections"]
    assert set(sections) == {"topic", "intent", "outcome", "open_items", "key_facts"}
    assert all(fact["who"] in ("user", "assistant") for fact in sections["key_facts"])
    assert not Message.objects.filter(session=session, archive__isnull=True).exists()
    session.refresh_from_db()
    assert session.committed_at is not None


def test_a_second_commit_with_nothing_new_is_a_no_op_that_says_so(auth_client, user):
    session = ChatSessionFactory(owner=user)
    _post(auth_client, session, FIRST_SESSION)
    auth_client.post(f"/api/sessions/{session.id}/commit", {}, format="json")
    body = auth_client.post(f"/api/sessions/{session.id}/commit", {}, format="json").json()
    assert body["committed"] is False and body["archive"] is None
    assert "Nothing new to commit" in body["message"]
    assert body["memory_diff"] == {"created": [], "updated": [], "unchanged": []}
    assert Archive.objects.count() == 1


def test_keep_recent_leaves_the_last_turns_live_and_the_next_archive_continues(auth_client, user):
    session = ChatSessionFactory(owner=user)
    _post(auth_client, session, FIRST_SESSION)
    first = auth_client.post(f"/api/sessions/{session.id}/commit", {"keep_recent": 2}, format="json").json()
    assert first["archive"]["message_count"] == 2 and first["archive"]["last_seq"] == 2
    assert Message.objects.filter(session=session, archive__isnull=True).count() == 2
    _post(auth_client, session, [("user", "Thanks, that fixed it.")])
    second = auth_client.post(f"/api/sessions/{session.id}/commit", {}, format="json").json()
    assert second["archive"]["uri"].endswith("archive_002")
    assert (second["archive"]["first_seq"], second["archive"]["last_seq"]) == (3, 5)


@pytest.mark.parametrize("body", [{"keep_recent": -1}, {"keep_recent": "many"}])
def test_a_bad_keep_recent_is_refused(auth_client, user, body):
    session = ChatSessionFactory(owner=user)
    assert auth_client.post(f"/api/sessions/{session.id}/commit", body, format="json").status_code == 400


@pytest.mark.django_db(transaction=True)
def test_concurrent_commits_never_archive_a_message_twice_or_lose_one(settings):
    settings.AUTO_COMMIT_TURNS = 0
    session = ChatSessionFactory(owner=UserFactory())
    _say(session, FIRST_SESSION * 10)
    results, errors = [], []
    barrier = threading.Barrier(4)

    def commit():
        try:
            barrier.wait()
            results.append(services.session_commit(session=ChatSession.objects.get(pk=session.pk)))
        except Exception as exc:  # surfaced below
            errors.append(exc)
        finally:
            close_old_connections()

    threads = [threading.Thread(target=commit) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert sorted(r.committed for r in results) == [False, False, False, True]
    assert Archive.objects.count() == 1
    assert Message.objects.filter(archive__isnull=True).count() == 0
    assert Archive.objects.get().message_count == Message.objects.count() == 40


@pytest.mark.django_db(transaction=True)
def test_concurrent_appends_get_distinct_sequence_numbers():
    session = ChatSessionFactory(owner=UserFactory())
    barrier = threading.Barrier(4)

    def append(n):
        barrier.wait()
        _say(ChatSession.objects.get(pk=session.pk), [("user", f"writer {n} line {i}") for i in range(25)])
        close_old_connections()

    threads = [threading.Thread(target=append, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(Message.objects.values_list("seq", flat=True)) == list(range(1, 101))


def test_memories_are_extracted_at_commit_with_a_diff(auth_client, user, django_capture_on_commit_callbacks):
    session = ChatSessionFactory(owner=user)
    _post(auth_client, session, FIRST_SESSION)
    with django_capture_on_commit_callbacks(execute=True):
        body = auth_client.post(f"/api/sessions/{session.id}/commit", {}, format="json").json()
    created = {(m["category"], m["key"]): m["content"] for m in body["memory_diff"]["created"]}
    assert created[("profile", "name")] == "Is called Dana Whitfield."
    assert created[("profile", "location")] == "Lives in Lyon."
    assert created[("preferences", "short_answer")] == "Prefers short answers."
    assert ("cases", "nightly_export_job_fail_memory") in created
    assert body["memory_diff"]["updated"] == [] and body["memory_diff"]["unchanged"] == []
    memory = Memory.objects.get(key="name")
    assert memory.uri == f"viking://user/{user.id}/memories/profile/{memory.id}"
    assert memory.source_archive.uri.endswith("archive_001")
    assert list(memory.source_messages.values_list("seq", flat=True)) == [1]
    assert memory.embedding is not None, "memories are embedded by a worker after the commit"


def test_a_later_statement_updates_the_memory_in_place_and_keeps_the_old_text(auth_client, user):
    first = ChatSessionFactory(owner=user)
    _post(auth_client, first, FIRST_SESSION)
    auth_client.post(f"/api/sessions/{first.id}/commit", {}, format="json")

    second = ChatSessionFactory(owner=user)
    _post(auth_client, second, [("user", "I moved, I live in Grenoble now. My name is Dana Whitfield.")])
    diff = auth_client.post(f"/api/sessions/{second.id}/commit", {}, format="json").json()["memory_diff"]

    assert [(m["key"], m["content"], m["previous"]) for m in diff["updated"]] == [
        ("location", "Lives in Grenoble.", "Lives in Lyon.")
    ]
    assert [m["key"] for m in diff["unchanged"]] == ["name"]
    location = Memory.objects.get(key="location")
    assert Memory.objects.filter(key="location").count() == 1
    assert location.history[0]["content"] == "Lives in Lyon."
    assert location.history[0]["archive_uri"].endswith(f"{first.id}/history/archive_001")


def test_text_the_system_injected_is_never_extracted_as_a_new_memory(auth_client, user):
    session = ChatSessionFactory(owner=user)
    Memory.objects.create(owner=user, category="entities", key="manager", content="Manager: Priya Raman")
    _post(
        auth_client,
        session,
        [
            ("system", "Known about the user: My name is Eve Injected. I live in Atlantis."),
        ],
    )
    auth_client.post(
        f"/api/sessions/{session.id}/messages",
        {
            "messages": [
                {
                    "role": "user",
                    "content": "Relevant memories: My name is Mallory Recalled.",
                    "metadata": {"source": "recall"},
                },
                {"role": "user", "content": "Manager: Priya Raman. I prefer tea over coffee."},
            ]
        },
        format="json",
    )
    diff = auth_client.post(f"/api/sessions/{session.id}/commit", {}, format="json").json()["memory_diff"]
    assert [(m["category"], m["key"]) for m in diff["created"]] == [("preferences", "tea")]
    assert not Memory.objects.filter(content__contains="Eve").exists()
    assert not Memory.objects.filter(content__contains="Mallory").exists()


def test_memories_can_be_listed_by_category_and_deleted(auth_client, user):
    session = ChatSessionFactory(owner=user)
    _post(auth_client, session, FIRST_SESSION)
    auth_client.post(f"/api/sessions/{session.id}/commit", {}, format="json")
    listing = auth_client.get("/api/memories", {"category": "profile"}).json()
    assert {m["key"] for m in listing["results"]} == {"name", "location"}
    memory_id = listing["results"][0]["id"]
    assert auth_client.delete(f"/api/memories/{memory_id}").status_code == 204
    assert auth_client.get(f"/api/memories/{memory_id}").status_code == 404
    assert auth_client.get("/api/memories", {"category": "gossip"}).status_code == 400


def test_another_users_memories_are_invisible(auth_client):
    theirs = Memory.objects.create(owner=UserFactory(), category="profile", key="name", content="Name: Zed")
    assert auth_client.get("/api/memories").json()["count"] == 0
    assert auth_client.get(f"/api/memories/{theirs.id}").status_code == 404
    assert auth_client.delete(f"/api/memories/{theirs.id}").status_code == 404
    assert Memory.objects.filter(id=theirs.id).exists()


def test_deleting_a_session_takes_the_memories_derived_only_from_it(auth_client, user):
    first = ChatSessionFactory(owner=user)
    _post(auth_client, first, FIRST_SESSION)
    auth_client.post(f"/api/sessions/{first.id}/commit", {}, format="json")
    second = ChatSessionFactory(owner=user)
    _post(auth_client, second, [("user", "I live in Lyon, by the way.")])
    auth_client.post(f"/api/sessions/{second.id}/commit", {}, format="json")

    auth_client.delete(f"/api/sessions/{first.id}")
    remaining = set(Memory.objects.values_list("key", flat=True))
    assert remaining == {"location"}, "only the memory confirmed by the other session survives"
    assert list(Memory.objects.get(key="location").source_messages.values_list("session", flat=True)) == [second.id]


def test_auto_commit_runs_in_a_worker_once_enough_turns_are_pending(
    auth_client, user, settings, django_capture_on_commit_callbacks
):
    settings.AUTO_COMMIT_TURNS = 6
    settings.HISTORY_MAX_TURNS = 2
    session = ChatSessionFactory(owner=user)
    with django_capture_on_commit_callbacks(execute=True):
        _post(auth_client, session, FIRST_SESSION)
    assert not Archive.objects.exists()
    with django_capture_on_commit_callbacks(execute=True):
        _post(auth_client, session, [("user", "One more thing."), ("assistant", "Sure, go ahead.")])
    archive = Archive.objects.get()
    assert (archive.first_seq, archive.last_seq) == (1, 4), "the last HISTORY_MAX_TURNS turns stay live"


def test_sentences_the_new_overview_quotes_still_yield_memories(auth_client, user):
    session = ChatSessionFactory(owner=user)
    _post(auth_client, session, [("user", "My deadline is Friday, I still need to finish the report.")])
    diff = auth_client.post(f"/api/sessions/{session.id}/commit", {}, format="json").json()["memory_diff"]
    assert [(m["category"], m["key"]) for m in diff["created"]] == [("events", "deadline")]


@pytest.mark.django_db(transaction=True)
def test_two_sessions_updating_one_memory_at_once_keep_both_texts(settings):
    settings.AUTO_COMMIT_TURNS = 0
    owner = UserFactory()
    Memory.objects.create(owner=owner, category="profile", key="location", content="Lives in Lyon")
    sessions = [ChatSessionFactory(owner=owner) for _ in range(2)]
    _say(sessions[0], [("user", "I live in Grenoble now.")])
    _say(sessions[1], [("user", "I live in Nantes now.")])
    barrier = threading.Barrier(2)
    errors = []

    def commit(session):
        barrier.wait()
        try:
            services.session_commit(session=session)
        except Exception as exc:  # surfaced below
            errors.append(exc)
        finally:
            close_old_connections()

    threads = [threading.Thread(target=commit, args=(s,)) for s in sessions]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    memory = Memory.objects.get(key="location")
    texts = [entry["content"] for entry in memory.history] + [memory.content]
    assert texts[0] == "Lives in Lyon" and sorted(texts[1:]) == ["Lives in Grenoble.", "Lives in Nantes."]


@pytest.mark.django_db(transaction=True)
def test_a_slow_commit_does_not_hold_up_new_messages(monkeypatch, settings):
    from foundation.ai.engines import ExtractiveEngine

    settings.AUTO_COMMIT_TURNS = 0
    session = ChatSessionFactory(owner=UserFactory())
    _say(session, FIRST_SESSION)
    original = ExtractiveEngine.overview
    summarising, answered = threading.Event(), threading.Event()

    def slow_overview(self, turns, **kwargs):
        # A hosted model taking its time: it answers only once the new message has been recorded.
        summarising.set()
        answered.wait(timeout=SLOW_MODEL_S)
        return original(self, turns, **kwargs)

    monkeypatch.setattr(ExtractiveEngine, "overview", slow_overview)
    committing = threading.Thread(target=lambda: (services.session_commit(session=session), close_old_connections()))
    committing.start()
    assert summarising.wait(timeout=SLOW_MODEL_S), "the commit never reached the model"
    started = time.monotonic()
    _say(ChatSession.objects.get(pk=session.pk), [("user", "A new question while the commit runs.")])
    waited = time.monotonic() - started
    answered.set()
    committing.join()
    assert waited < 1.0, f"the append waited {waited:.1f}s for the commit"
    archive = Archive.objects.get()
    assert archive.last_seq == 4 and Message.objects.get(seq=5).archive is None


def test_an_archive_is_made_of_what_people_said_not_of_quotes_links_or_list_numbers(user):
    session = ChatSessionFactory(owner=user)
    quoted = (
        "No language model is configured; these passages were retrieved (not generated) for your question:\n"
        '1. "Descale the kettle every four weeks." (Descaling, viking://resources/users/1/documents/abc/section_001)\n'
        '2. "The warranty lasts two years." (Warranty, viking://resources/users/1/documents/abc/section_002)'
    )
    generated = (
        "You should descale it monthly [viking://resources/users/1/documents/abc/section_001].\n"
        "1. Fill it with vinegar.\n2. Boil it once."
    )
    services.message_bulk_create(
        session=session,
        messages=[
            services.NewMessage("user", "How often should I descale my Aurora kettle? The water here is very hard."),
            services.NewMessage("assistant", quoted, metadata={"source": "retrieved"}),
            services.NewMessage("assistant", generated, metadata={"source": "generated"}),
        ],
    )
    archive = services.session_commit(session=session).archive
    assert "viking" not in archive.overview and "viking" not in archive.abstract
    assert "passages were retrieved" not in archive.overview, "the built-in engine's quotes are not summarised"
    facts = [fact["fact"] for fact in archive.overview_data["key_facts"]]
    assert all(len(fact.split()) >= 2 for fact in facts), facts
    assert "kettle" in archive.overview.lower()


def test_a_question_the_built_in_engine_answered_with_quotes_is_not_left_open(user):
    session = ChatSessionFactory(owner=user)
    quoted = (
        "No language model is configured; these passages were retrieved (not generated) for your question:\n"
        '1. "Hold the reset button for 10 seconds." (Reset, viking://resources/users/1/documents/abc/section_001)'
    )
    services.message_bulk_create(
        session=session,
        messages=[
            services.NewMessage("user", "How do I factory-reset the Aurora router?"),
            services.NewMessage("assistant", quoted, metadata={"source": "retrieved"}),
            services.NewMessage("user", "Does a reset also erase the Wi-Fi password?"),
        ],
    )
    archive = services.session_commit(session=session).archive
    assert archive.overview_data["open_items"] == ["Does a reset also erase the Wi-Fi password?"]
    assert "Hold the reset button" not in archive.overview, "the quote answers the question but is not summarised"
