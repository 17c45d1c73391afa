"""The rolling summary: the history a model is handed stays bounded whatever the session's
length, the watermark is stored before any turn leaves the verbatim window, and a failing summariser
leaves the window as it was."""

import pytest

from retrieval_app.core.ai.engines import ExtractiveEngine
from sessions_app import services
from sessions_app.models import ChatSession
from tests.factories import ChatSessionFactory

pytestmark = pytest.mark.django_db

TOPICS = [
    "the invoice export",
    "the Lyon office lease",
    "the Kafka consumer lag",
    "the hiring plan for Q3",
    "the SSO migration",
    "the marketing budget of 42000 euros",
    "the on-call rota",
]


def _conversation(session, turns: int):
    messages = []
    for i in range(turns):
        topic = TOPICS[i % len(TOPICS)]
        if i % 2 == 0:
            messages.append(
                services.NewMessage(
                    "user", f"Turn {i}: what is the status of {topic}? It blocks the release planned for week {i % 52}."
                )
            )
        else:
            messages.append(
                services.NewMessage(
                    "assistant",
                    f"Turn {i}: {topic} is on track; the owner confirmed a fix by Friday and filed ticket OPS-{i}.",
                )
            )
    services.message_bulk_create(session=session, messages=messages)


@pytest.mark.parametrize("turns", [10, 100, 1000])
def test_the_context_stays_bounded_at_10_100_and_1000_turns(turns, settings):
    session = ChatSessionFactory()
    _conversation(session, turns)
    history = services.session_history_context(session=session)
    # About 1,100 tokens whatever the length (200-word summary + verbatim budget).
    assert history.token_estimate <= 1100
    assert len(history.turns) <= settings.HISTORY_MAX_TURNS
    assert history.turns[-1].seq == turns, "the newest turn is always verbatim"
    if turns > settings.HISTORY_MAX_TURNS:
        assert len(history.summary.split()) <= settings.ROLLING_SUMMARY_MAX_WORDS
        assert history.summary_through_seq == history.turns[0].seq - 1, "no turn falls between summary and window"


def test_folding_is_lazy(settings):
    session = ChatSessionFactory()
    _conversation(session, settings.HISTORY_MAX_TURNS)
    assert services.session_history_context(session=session).folded == 0
    _conversation(session, 1)
    assert services.session_history_context(session=session).folded > 0
    _conversation(session, 1)
    assert services.session_history_context(session=session).folded == 0, "no fold while the window has room"


def test_the_watermark_is_persisted_with_the_summary(settings):
    session = ChatSessionFactory()
    _conversation(session, 30)
    history = services.session_history_context(session=session)
    stored = ChatSession.objects.get(pk=session.pk)
    assert stored.summary_through_seq == history.summary_through_seq > 0
    assert stored.rolling_summary == history.summary and stored.summary_updated_at is not None


def test_a_failing_summariser_drops_no_turn_and_stores_nothing(monkeypatch):
    session = ChatSessionFactory()
    _conversation(session, 30)

    def broken(self, *args, **kwargs):
        raise RuntimeError("summariser down")

    monkeypatch.setattr(ExtractiveEngine, "summarize", broken)
    history = services.session_history_context(session=session)
    assert [t.seq for t in history.turns] == list(range(1, 31))
    assert history.error == "summariser down"
    stored = ChatSession.objects.get(pk=session.pk)
    assert (stored.summary_through_seq, stored.rolling_summary) == (0, "")


def test_the_summary_keeps_what_matters_from_folded_turns():
    session = ChatSessionFactory()
    services.message_bulk_create(
        session=session,
        messages=[
            services.NewMessage("user", "Our budget for the Lisbon offsite is 42000 euros."),
            *[services.NewMessage("assistant" if i % 2 else "user", f"Small talk number {i}.") for i in range(20)],
        ],
    )
    assert "42000 euros" in services.session_history_context(session=session).summary


def test_with_summarization_off_older_turns_are_simply_left_out(settings):
    settings.ENABLE_HISTORY_SUMMARIZATION = False
    session = ChatSessionFactory()
    _conversation(session, 100)
    history = services.session_history_context(session=session)
    assert history.summary == "" and history.turns[-1].seq == 100
    assert history.token_estimate <= settings.HISTORY_TOKEN_BUDGET
    assert ChatSession.objects.get(pk=session.pk).summary_through_seq == 0


def test_the_api_serves_the_history(auth_client, user, django_capture_on_commit_callbacks):
    session = ChatSessionFactory(owner=user)
    with django_capture_on_commit_callbacks(execute=True):  # the worker folds once the write commits
        _conversation(session, 40)
    body = auth_client.get(f"/api/sessions/{session.id}/history").json()
    assert body["summary"] and body["turns"][-1]["seq"] == 40 and body["token_estimate"] <= 1100


def test_reading_the_history_never_writes(auth_client, user, django_assert_num_queries):
    session = ChatSessionFactory(owner=user)
    _conversation(session, 15)  # past the window, below the worker's threshold: nothing folded yet
    with django_assert_num_queries(3):  # the token, the session, the newest turns
        body = auth_client.get(f"/api/sessions/{session.id}/history").json()
    assert body["summary"] == "" and body["summary_through_seq"] == 0
    assert [t["seq"] for t in body["turns"]][-1] == 15 and len(body["turns"]) <= 10
    assert body["pending_fold"] == body["turns"][0]["seq"] - 1, "the turns not shown are counted, not lost"
    assert ChatSession.objects.get(pk=session.pk).summary_through_seq == 0


def test_a_long_session_written_through_the_api_is_folded_by_a_worker(user, django_capture_on_commit_callbacks):
    session = ChatSessionFactory(owner=user)
    with django_capture_on_commit_callbacks(execute=True):
        _conversation(session, 25)
    stored = ChatSession.objects.get(pk=session.pk)
    assert stored.summary_through_seq > 0 and stored.rolling_summary
