"""Cross-session recall: vector search scoped to the owner and agent, a similarity threshold,
the token budget's trimming rule, and the keyword fallback when vectors are missing or cannot be made."""

import datetime as dt

import pytest
from django.core.management import call_command

from retrieval_app.recall import memory_recall, trim_to_token_budget
from sessions_app import services
from sessions_app.models import Message
from tests.factories import ChatSessionFactory, MessageFactory, UserFactory

pytestmark = pytest.mark.django_db

PAST = [
    ("user", "We deployed the billing service to Kubernetes with Helm charts last week."),
    ("assistant", "The Helm chart sets three replicas and a rolling update strategy."),
    ("user", "My daughter's piano recital is on Saturday."),
    ("assistant", "Good luck to her at the recital!"),
]


def _session(owner, pairs, *, agent_id="", title="Past conversation", embed=True, capture=None):
    session = ChatSessionFactory(owner=owner, agent_id=agent_id, title=title)
    if capture is not None:
        with capture(execute=embed):
            services.message_bulk_create(session=session, messages=[services.NewMessage(r, c) for r, c in pairs])
    else:
        services.message_bulk_create(session=session, messages=[services.NewMessage(r, c) for r, c in pairs])
    return session


@pytest.fixture
def history(user, django_capture_on_commit_callbacks):
    return _session(user, PAST, capture=django_capture_on_commit_callbacks)


def test_recall_finds_related_messages_by_meaning(auth_client, user, history):
    body = auth_client.post(
        "/api/memory/recall", {"query": "How was the billing deployment configured?"}, format="json"
    ).json()
    assert body["source"] in ("vector", "hybrid"), "found by meaning (and, here, by its words too)"
    assert body["messages"][0]["content"].startswith("We deployed the billing service")
    first = body["messages"][0]
    assert set(first) == {
        "id",
        "session_id",
        "session_title",
        "role",
        "content",
        "similarity",
        "score",
        "created_at",
        "metadata",
    }
    assert first["session_title"] == "Past conversation" and 0 < first["similarity"] <= 1
    assert all("recital" not in m["content"] for m in body["messages"]), "below the threshold"
    assert body["count"] == len(body["messages"]) and body["token_estimate"] > 0


def test_the_current_session_can_be_excluded(auth_client, history):
    body = auth_client.post(
        "/api/memory/recall", {"query": "Helm chart replicas", "exclude_session_id": str(history.id)}, format="json"
    ).json()
    assert body["count"] == 0


def test_recall_is_scoped_to_the_agent_when_one_is_named(user, django_capture_on_commit_callbacks):
    _session(user, PAST[:2], agent_id="ops-bot", capture=django_capture_on_commit_callbacks)
    assert memory_recall(owner=user, query="Helm deployment", agent_id="support-bot")["count"] == 0
    assert memory_recall(owner=user, query="Helm deployment", agent_id="ops-bot")["count"] > 0


def test_another_users_history_is_never_recalled(auth_client, django_capture_on_commit_callbacks):
    _session(UserFactory(), PAST, capture=django_capture_on_commit_callbacks)
    for query in ("billing deployment with Helm", "piano recital"):
        assert auth_client.post("/api/memory/recall", {"query": query}, format="json").json()["count"] == 0


def test_the_threshold_and_max_results_are_honoured(user, history):
    assert memory_recall(owner=user, query="Helm", threshold=0.99)["source"] == "keyword"
    assert memory_recall(owner=user, query="billing Helm Kubernetes", threshold=-1, max_results=2)["count"] == 2


def test_messages_no_worker_has_embedded_yet_are_found_by_meaning_at_once(user, django_capture_on_commit_callbacks):
    """The worker that embeds new turns may not have run yet (or be busy with someone's import): the
    recall embeds the newest of them itself, so what was just said is found by what it means."""
    _session(user, PAST, capture=django_capture_on_commit_callbacks, embed=False)
    assert not Message.objects.filter(embedding__isnull=False).exists()
    result = memory_recall(owner=user, query="How was the billing deployment configured?")
    assert result["source"] in ("vector", "hybrid")
    assert result["messages"][0]["content"].startswith("We deployed the billing service")
    assert result["messages"][0]["similarity"] > 0.35
    assert Message.objects.filter(embedding__isnull=True).count() == 0, "their vectors are kept for next time"


def test_keyword_recall_leaves_stopwords_out(user, history):
    found = memory_recall(owner=user, query="what was the recital about?", strategy="bm25")
    assert {m["content"] for m in found["messages"]} == {
        "Good luck to her at the recital!",
        "My daughter's piano recital is on Saturday.",
    }
    assert memory_recall(owner=user, query="what was the about", strategy="bm25")["count"] == 0


def test_when_the_embedding_provider_fails_recall_falls_back_to_keywords(user, history, settings, fake_llm):
    settings.EMBEDDING_MODEL, settings.EMBEDDING_API_BASE, settings.EMBEDDING_MAX_RETRIES = (
        "openai/test-embed",
        fake_llm.url,
        0,
    )
    Message.objects.update(embedding_model="openai/test-embed")  # as if that provider made them
    fake_llm.failures = 100
    result = memory_recall(owner=user, query="Helm charts")
    assert result["source"] == "keyword" and result["count"] >= 1


def test_the_token_budget_follows_seed_002s_rule():
    messages = [{"content": "A" * 4000}, {"content": "B" * 4000}, {"content": "C" * 4000}]
    trimmed = trim_to_token_budget(messages, 1500)
    assert len(trimmed) == 2
    assert trimmed[1]["content"] == "B" * 2000 + "..."
    assert len(trim_to_token_budget(messages, 1020)) == 1, "20 tokens (80 characters) left: not worth a stub"


def test_recall_trims_its_answer_to_max_tokens(user, history):
    everything = memory_recall(owner=user, query="billing Helm Kubernetes", threshold=-1)
    result = memory_recall(owner=user, query="billing Helm Kubernetes", threshold=-1, max_tokens=20)
    assert result["token_estimate"] <= 20 and 0 < result["count"] < everything["count"]


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"query": ""},
        {"query": "x" * 10_001},
        {"query": "q", "max_results": 0},
        {"query": "q", "max_results": 101},
        {"query": "q", "max_tokens": 0},
        {"query": "q", "exclude_session_id": "nope"},
        {"query": "q", "threshold": 2},
    ],
)
def test_bad_recall_requests_are_refused(auth_client, body):
    response = auth_client.post("/api/memory/recall", body, format="json")
    assert response.status_code == 400 and response.json()["error"]["code"] == "invalid"


def test_backfill_embeds_what_has_no_vector_with_a_progress_bar(user, django_capture_on_commit_callbacks, capsys):
    _session(user, PAST * 30, capture=django_capture_on_commit_callbacks, embed=False)
    services.session_commit(session=Message.objects.first().session)
    call_command("backfill_embeddings", "--batch-size", "16")
    out = capsys.readouterr()
    assert not Message.objects.filter(embedding__isnull=True).exists()
    assert "messages: 120 embedded" in out.out and "archives: 1 embedded" in out.out
    assert "120/120" in out.err  # the progress bar
    call_command("backfill_embeddings")
    assert "messages: 0 embedded" in capsys.readouterr().out, "a second run has nothing left to do"


def test_backfill_can_run_in_the_worker(user, django_capture_on_commit_callbacks):
    from foundation.tasks import backfill_embeddings

    _session(user, PAST, capture=django_capture_on_commit_callbacks, embed=False)
    assert backfill_embeddings.delay().get()["messages"] == 4


def test_text_the_product_wrote_itself_is_never_recalled(user, django_capture_on_commit_callbacks):
    quoted = "No language model is configured; these passages were retrieved: the Helm chart sets three replicas."
    session = ChatSessionFactory(owner=user)
    with django_capture_on_commit_callbacks(execute=True):
        services.message_bulk_create(
            session=session,
            messages=[
                services.NewMessage("assistant", quoted, metadata={"source": "retrieved"}),
                services.NewMessage(
                    "user", "Remember: the Helm chart replicas were raised.", metadata={"injected": True}
                ),
                services.NewMessage("user", "We run three Helm chart replicas in production."),
            ],
        )
    found = memory_recall(owner=user, query="Helm chart replicas", threshold=0.0)
    assert [m["content"] for m in found["messages"]] == ["We run three Helm chart replicas in production."]


def test_a_question_about_a_time_prefers_what_was_said_then(user, django_capture_on_commit_callbacks):
    said = {
        "2025-03-08": "We went hiking in the Alps with my brother.",
        "2025-05-17": "We went hiking in the Pyrenees with my cousins.",
        "2025-09-20": "We went hiking in Snowdonia with the dog.",
    }
    with django_capture_on_commit_callbacks(execute=True):
        for day, text in said.items():
            session = ChatSessionFactory(owner=user)
            when = dt.datetime.fromisoformat(day).replace(hour=12, tzinfo=dt.UTC)
            services.message_bulk_create(session=session, messages=[services.NewMessage("user", text, created_at=when)])
    assert (
        memory_recall(owner=user, query="Where did we go hiking in May 2025?")["messages"][0]["content"]
        == said["2025-05-17"]
    )
    last_march = memory_recall(owner=user, query="Where did we go hiking last March?")["messages"]
    assert last_march[0]["content"] == said["2025-03-08"], "'last March' counts back from the latest memory"
    assert all(message["created_at"] for message in last_march), "every recalled message carries its date"


def test_a_turn_next_to_another_match_gains_a_share_of_its_score(user, settings):
    """The answer ("The tiler comes on Thursday") follows the turn that names the kitchen: its
    neighbour's match lends it weight, so it ranks higher with neighbours counted than alone."""
    kitchen = ChatSessionFactory(owner=user, title="Kitchen")
    services.message_bulk_create(
        session=kitchen,
        messages=[
            services.NewMessage("user", "We are redoing the kitchen: oak worktops and a new induction hob."),
            services.NewMessage("user", "The tiler comes on Thursday."),
        ],
    )
    _session(user, PAST)
    call_command("backfill_embeddings")

    def scores() -> dict[str, float]:
        found = memory_recall(owner=user, query="When is the kitchen tradesman coming?", threshold=0, strategy="rrf")
        return {m["content"]: m["score"] for m in found["messages"]}

    settings.RECALL_NEIGHBOUR_WEIGHT = 0
    alone = scores()
    settings.RECALL_NEIGHBOUR_WEIGHT = 0.3
    together = scores()
    tiler, kitchen_turn = "The tiler comes on Thursday.", kitchen.messages.order_by("seq").first().content
    assert together[tiler] == pytest.approx(alone[tiler] + 0.3 * alone[kitchen_turn], rel=1e-3)
    rank = {
        name: sorted(found, key=lambda c: -found[c]).index(tiler)
        for name, found in (("alone", alone), ("together", together))
    }
    assert rank["together"] <= rank["alone"]


def test_the_workers_sweep_embeds_rows_whose_job_was_lost_with_the_broker(user, django_capture_on_commit_callbacks):
    from datetime import timedelta

    from django.utils import timezone

    from foundation.tasks import send_queued_tasks

    _session(user, PAST, capture=django_capture_on_commit_callbacks, embed=False)  # jobs never ran
    just_written = MessageFactory(session=ChatSessionFactory(owner=user), content="Written a moment ago.")
    Message.objects.exclude(pk=just_written.pk).update(created_at=timezone.now() - timedelta(minutes=5))
    send_queued_tasks()
    assert not Message.objects.exclude(pk=just_written.pk).filter(embedding__isnull=True).exists()
    # A row written a moment ago is left to its own job, which is most likely still on its way.
    assert Message.objects.get(pk=just_written.pk).embedding is None


@pytest.mark.parametrize("strategy", ["", "bm25", "rrf"])
def test_a_word_searched_before_it_was_written_is_found_the_moment_it_is(
    user, django_capture_on_commit_callbacks, strategy
):
    """Statistics of the user's words are remembered between searches; one about a word nobody had
    written yet must not hide the first message that holds it."""
    _session(user, PAST, capture=django_capture_on_commit_callbacks)
    assert memory_recall(owner=user, query="zorblax gasket", strategy=strategy)["count"] == 0
    _session(
        user,
        [("user", "The zorblax turbine gasket cracked during the Tuesday inspection.")],
        capture=django_capture_on_commit_callbacks,
        embed=False,  # no worker has run: found by its words, and embedded by the recall itself
    )
    found = memory_recall(owner=user, query="zorblax gasket", strategy=strategy)
    assert found["messages"][0]["content"].startswith("The zorblax turbine gasket cracked")


def test_who_did_something_finds_the_turn_that_says_so_first(user, django_capture_on_commit_callbacks):
    chatter = [
        ("user", "The label printer in the warehouse keeps jamming on the thick labels."),
        ("assistant", "Try the thinner label stock and clean the rollers."),
        ("user", "Coffee machine on the second floor is broken again."),
        ("assistant", "I will log a ticket for the coffee machine."),
        ("user", "Who ordered the new printer toner?"),
        ("assistant", "Procurement ordered it on Monday."),
    ] * 4
    _session(user, chatter, capture=django_capture_on_commit_callbacks)
    question = "who spilled coffee on the label printer?"
    memory_recall(owner=user, query=question, threshold=0)
    _session(
        user,
        [("user", "The receptionist Marek spilled coffee on the label printer yesterday.")],
        capture=django_capture_on_commit_callbacks,
    )
    found = memory_recall(owner=user, query=question, threshold=0)
    assert found["messages"][0]["content"].startswith("The receptionist Marek spilled coffee")


def test_a_recalled_message_comes_back_with_its_metadata_speaker_and_moment_as_written(
    user, django_capture_on_commit_callbacks
):
    said_at = dt.datetime(2025, 6, 3, 9, 41, 7, 123457, tzinfo=dt.UTC)
    metadata = {"speaker": "Caroline", "tags": ["family", "trip"], "nested": {"n": 3, "ok": True}}
    session = ChatSessionFactory(owner=user)
    with django_capture_on_commit_callbacks(execute=True):
        services.message_bulk_create(
            session=session,
            messages=[
                services.NewMessage("user", "We booked the ferry to Skye.", metadata=metadata, created_at=said_at)
            ],
        )
    found = memory_recall(owner=user, query="When did Caroline book the ferry to Skye?")["messages"][0]
    assert found["metadata"] == metadata
    assert found["created_at"] == said_at.isoformat(), "to the microsecond, in UTC"
