"""The rolling summary: the history a model is handed stays bounded whatever the session's
length, the watermark is stored before any turn leaves the verbatim window, and a failing summariser
leaves the window as it was."""

import pytest

from foundation.ai.engines import ExtractiveEngine
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


def test_only_what_overflows_the_window_is_folded(settings):
    """No fold while the window has room; past it, just the turns that no longer fit, so the window
    always holds the latest HISTORY_MAX_TURNS turns (these are short enough for the token budget)."""
    session = ChatSessionFactory()
    _conversation(session, settings.HISTORY_MAX_TURNS)
    assert services.session_history_context(session=session).folded == 0
    for total in range(settings.HISTORY_MAX_TURNS + 1, settings.HISTORY_MAX_TURNS + 4):
        _conversation(session, 1)
        history = services.session_history_context(session=session)
        assert history.folded == 1
        assert [t.seq for t in history.turns] == list(range(total - settings.HISTORY_MAX_TURNS + 1, total + 1))
        assert history.summary_through_seq == total - settings.HISTORY_MAX_TURNS


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


LAUNCH = [
    ("user", "I need help planning the launch of our new espresso grinder, the Kestrel G2, and the launch plan."),
    ("assistant", "Happy to help with the Kestrel G2 launch plan: owners, the launch date, the budget and the press."),
    ("user", "Marta from sales will own the launch event and our designer Joel takes the launch marketing."),
    ("assistant", "Good split for the launch. Next, the launch date drives everything else in the launch plan."),
    ("user", "We settled on Thursday 9 October as the launch date, after a long argument with the retailers."),
    ("assistant", "Then launch stock must reach the retailers by 25 September at the latest."),
    ("user", "The warehouse can ship 1,200 units in the first batch, all the factory delivers in time."),
    ("assistant", "1,200 units is a reasonable first batch for a niche launch like this one."),
    ("user", "Budget wise we have 18,000 euros for the whole launch, including the event."),
    ("assistant", "With 18,000 euros keep the launch event under 6,000 and spend the rest on marketing."),
    ("user", "Marta found a venue for the launch, the Harbour Hall in Rotterdam, for 4,500 euros."),
    ("assistant", "The Harbour Hall fits the launch budget and leaves room for catering."),
    ("user", "What should we do about press samples for the launch? Journalists keep asking."),
    ("assistant", "Send launch samples to around ten reviewers three weeks before, under embargo."),
    ("user", "We decided to send 12 samples, embargoed until the launch day itself."),
    ("assistant", "Twelve samples is fine for the launch; track who received one."),
    ("user", "Joel still needs to finish the product photos for the launch, they are not done yet."),
    ("assistant", "The launch photos should be ready before the samples ship so reviewers can use them."),
    ("user", "Do we need a pre-order page on the website for the launch, or is that overkill?"),
    ("assistant", "Let me know what traffic the site gets before the launch; then we can decide."),
    ("user", "Haha ok, I'll ask our web guy about the launch traffic."),
    ("assistant", "Sounds good, the launch is in good shape."),
    ("user", "Great, thanks for all the launch help so far."),
    ("assistant", "You're welcome, good luck with the launch."),
]


def test_a_long_chat_keeps_its_facts_from_every_folded_turn_and_a_full_window(
    auth_client, user, settings, django_capture_on_commit_callbacks
):
    """24 recorded turns that keep returning to their subject, then a chat question: the summary holds
    the facts said all along the folded range, not just the exchange that introduced the subject, and
    the latest turns are verbatim, as many as the window holds."""
    session = ChatSessionFactory(owner=user)
    with django_capture_on_commit_callbacks(execute=True):
        services.message_bulk_create(session=session, messages=[services.NewMessage(r, c) for r, c in LAUNCH])
    with django_capture_on_commit_callbacks(execute=True):
        auth_client.post(
            "/api/ai/chat", {"message": "When is the launch?", "session_id": str(session.id)}, format="json"
        )
    body = auth_client.get(f"/api/sessions/{session.id}/history").json()
    seqs = [turn["seq"] for turn in body["turns"]]
    assert len(seqs) == settings.HISTORY_MAX_TURNS and seqs[-1] == len(LAUNCH) + 2
    assert body["summary_through_seq"] == seqs[0] - 1 and body["pending_fold"] == 0
    summary = body["summary"]
    assert len(summary.split()) <= settings.ROLLING_SUMMARY_MAX_WORDS
    for fact in ("Marta", "9 October", "1,200 units", "18,000 euros", "Harbour Hall", "12 samples"):
        assert fact in summary, f"{fact!r} was folded out of reach"


def test_a_replaced_exchange_leaves_the_summary_the_turn_goes_on_reading(settings):
    """Regenerating an answer the summary had folded in: the same turn then reads the history, and must
    find the question that replaced it, not the summary of what was replaced."""
    settings.HISTORY_MAX_TURNS = 1
    session = ChatSessionFactory()
    _conversation(session, 4)
    assert services.session_history_context(session=session).summary_through_seq == 3, "the last question folded"
    question = services.NewMessage("user", "What is the status of the office move?")
    services.message_exchange_replace(session=session, question=question)
    history = services.session_history_context(session=session)
    assert [turn.content for turn in history.turns] == [question.content]
    assert "Turn 2:" not in history.summary and history.summary_through_seq == 2
