"""With LLM_MODEL / EMBEDDING_MODEL set, litellm does the work, tested over real HTTP against a loopback
OpenAI-compatible server; any failure falls back to the extractive engine and is recorded."""

import json

import pytest

from foundation import ai
from foundation.ai.engines import LiteLLMEngine, Turn
from foundation.models import ModelCall
from tests.helpers import free_port

pytestmark = pytest.mark.django_db

TURNS = [
    Turn("user", "My name is Dana. The export job fails every night."),
    Turn("assistant", "Raise the worker memory limit to 2 GB."),
]


def test_overviews_come_from_the_llm_when_one_is_configured(hosted_llm):
    hosted_llm.reply = lambda messages: (
        "```json\n"
        + json.dumps(
            {
                "topic": "nightly export failure",
                "intent": "fix the export",
                "outcome": "raise memory to 2 GB",
                "open_items": [],
                "key_facts": [{"who": "user", "fact": "the export fails nightly"}],
            }
        )
        + "\n```"
    )
    overview = ai.text_engine().overview(TURNS)
    assert overview.topic == "nightly export failure"
    assert overview.key_facts == [("user", "the export fails nightly")]
    assert "Raise the worker memory limit" in hosted_llm.requests[0]["body"]["messages"][0]["content"]
    call = ModelCall.objects.get(purpose="archive_overview")
    assert (call.backend, call.model, call.ok) == ("litellm", "openai/test-chat", True)
    assert call.input_tokens == 40 and call.output_tokens > 0


def test_memories_come_from_the_llm_and_keep_only_known_categories(hosted_llm):
    hosted_llm.reply = lambda messages: json.dumps(
        [
            {"category": "profile", "key": "Name", "content": "The user's name is Dana."},
            {"category": "gossip", "key": "x", "content": "not a category"},
        ]
    )
    found = ai.text_engine().extract_memories(TURNS)
    assert [(c.category, c.key, c.content) for c in found] == [("profile", "name", "The user's name is Dana.")]


def test_a_failed_llm_call_falls_back_to_the_extractive_engine_and_is_recorded(hosted_llm):
    hosted_llm.failures = 10
    summary = ai.text_engine().summarize(TURNS, previous="", max_words=50)
    assert "Raise the worker memory limit to 2 GB." in summary  # the extractive engine's answer
    failed = ModelCall.objects.get(purpose="rolling_summary", backend="litellm")
    assert not failed.ok
    assert "503" in failed.error or "overloaded" in failed.error
    assert ModelCall.objects.filter(purpose="rolling_summary", backend="extractive", ok=True).exists()


def test_an_unusable_llm_answer_falls_back_too(hosted_llm):
    hosted_llm.reply = lambda messages: "I cannot produce JSON today."
    overview = ai.text_engine().overview(TURNS)
    assert overview.outcome == "Raise the worker memory limit to 2 GB."


def test_summaries_from_the_llm_are_cut_to_the_word_limit(hosted_llm):
    hosted_llm.reply = lambda messages: "word " * 500
    assert len(ai.text_engine().summarize(TURNS, previous="", max_words=30).split()) == 30


def test_retries_recover_from_a_transient_failure(hosted_llm, settings):
    settings.LLM_MAX_RETRIES = 2
    hosted_llm.failures = 1
    hosted_llm.reply = lambda messages: "Dana's export job is fixed by more memory."
    assert ai.text_engine().summarize(TURNS, previous="", max_words=30) == "Dana's export job is fixed by more memory."


def test_embeddings_come_from_litellm_when_an_embedding_model_is_configured(fake_llm, settings):
    settings.EMBEDDING_MODEL = "openai/test-embed"
    settings.EMBEDDING_API_BASE = fake_llm.url
    settings.EMBEDDING_API_KEY = "sk-test"
    vectors, model = ai.embed_texts(["nightly export", "export nightly job"], purpose="test")
    assert model == "openai/test-embed" and len(vectors[0]) == 384
    assert ai.active_embedding_model() == "openai/test-embed"
    call = ModelCall.objects.get(purpose="test")
    assert call.backend == "litellm" and call.input_count == 2 and call.input_tokens == 5


def test_an_embedding_provider_failure_is_an_embedding_error(fake_llm, settings):
    settings.EMBEDDING_MODEL = "openai/test-embed"
    settings.EMBEDDING_API_BASE = fake_llm.url
    settings.EMBEDDING_MAX_RETRIES = 0
    fake_llm.failures = 5
    with pytest.raises(ai.EmbeddingError):
        ai.embed_query("anything")
    assert not ModelCall.objects.get(kind="embedding").ok


def test_the_engine_is_chosen_at_call_time(settings, fake_llm):
    settings.LLM_MODEL = ""
    assert ai.text_engine().name == "extractive"
    settings.LLM_MODEL = "openai/test-chat"
    assert isinstance(ai.text_engine(), LiteLLMEngine)


def test_retries_cover_as_many_failures_as_configured(hosted_llm, settings):
    settings.LLM_MAX_RETRIES = 2
    hosted_llm.failures = 2
    hosted_llm.reply = lambda messages: "Second retry answered."
    assert ai.text_engine().complete([{"role": "user", "content": "hi"}], purpose="test", owner_id=None) == (
        "Second retry answered."
    )
    assert len(hosted_llm.requests) == 3


def test_a_dead_llm_endpoint_is_reported_as_unreachable_after_its_retries(settings):
    settings.LLM_MODEL = "openai/test-chat"
    settings.LLM_API_BASE = f"http://127.0.0.1:{free_port()}/v1"  # nothing listens there
    settings.LLM_API_KEY = "sk-test"
    settings.LLM_MAX_RETRIES = 1
    settings.LLM_TIMEOUT_S = 5
    with pytest.raises(Exception) as failed:
        ai.text_engine().complete([{"role": "user", "content": "hi"}], purpose="test", owner_id=None)
    assert "tenacity" not in str(failed.value), "retries need their library installed"
    assert "connection" in str(failed.value).lower()
    call = ModelCall.objects.get(purpose="test")
    assert not call.ok and "Connection" in call.error
