"""Streamed answers from a model, in a thread (``stream``) and on an event loop (``astream``), tested over
real HTTP against the loopback OpenAI-compatible server. A model reached through the OpenAI API streams
through the openai client itself, any other through litellm: both routes give the same pieces, the same
failures and the same records."""

import asyncio

import pytest

from foundation import ai
from foundation.ai.engines import IncompleteAnswer, LiteLLMEngine
from foundation.models import ModelCall

pytestmark = pytest.mark.django_db

QUESTION = [{"role": "user", "content": "Count to five, please."}]


@pytest.fixture(params=["openai client", "litellm"])
def route(request, hosted_llm, settings):
    """Each test runs once per route an answer can stream by."""
    settings.LLM_STREAM_OPENAI_CLIENT = request.param == "openai client"
    hosted_llm.reply = lambda messages: "one two three four five"
    return request.param


def _streamed(**kwargs) -> list[str]:
    return list(ai.text_engine().stream(QUESTION, purpose="chat", owner_id=None, **kwargs))


def _astreamed(*, stop_after: int = 0) -> tuple[list[str], ai.StreamedCall]:
    engine = ai.text_engine()
    call = ai.StreamedCall(engine=engine, purpose="chat", owner_id=None)

    async def read() -> list[str]:
        pieces = []
        stream = engine.astream(QUESTION, call=call)
        try:
            async for piece in stream:
                pieces.append(piece)
                if stop_after and len(pieces) == stop_after:
                    break
        finally:
            await stream.aclose()
        return pieces

    try:
        return asyncio.run(read()), call
    finally:
        call.record()


def test_an_answer_streams_piece_by_piece_and_is_recorded(route, hosted_llm):
    assert _streamed() == ["one ", "two ", "three ", "four ", "five"]
    request = hosted_llm.requests[-1]["body"]
    assert request["model"] == "test-chat" and request["stream"] is True and request["temperature"] == 0.2
    assert request["messages"] == QUESTION
    call = ModelCall.objects.get(purpose="chat")
    assert call.ok and call.output_tokens > 0 and call.input_tokens > 0


def test_an_answer_streams_on_an_event_loop_the_same_way(route, hosted_llm):
    pieces, _ = _astreamed()
    assert pieces == ["one ", "two ", "three ", "four ", "five"]
    # A second event loop (a new process's warm-up runs on one of its own) gets connections of its own.
    again, _ = _astreamed()
    assert again == pieces
    calls = ModelCall.objects.filter(purpose="chat")
    assert calls.count() == 2 and all(call.ok for call in calls)


def test_an_answer_cut_off_by_the_provider_is_incomplete_not_finished(route, hosted_llm):
    hosted_llm.break_after = 2
    said = []
    with pytest.raises(IncompleteAnswer):
        for piece in ai.text_engine().stream(QUESTION, purpose="chat", owner_id=None):
            said.append(piece)
    assert said == ["one ", "two "]
    with pytest.raises(IncompleteAnswer):
        _astreamed()
    assert [call.ok for call in ModelCall.objects.filter(purpose="chat")] == [False, False]
    assert all("IncompleteAnswer" in call.error for call in ModelCall.objects.filter(purpose="chat"))


def test_a_provider_that_fails_is_retried_as_configured(route, hosted_llm, settings):
    settings.LLM_MAX_RETRIES = 1
    hosted_llm.failures = 1
    assert "".join(_streamed()) == "one two three four five"
    assert len(hosted_llm.requests) == 2


def test_a_provider_that_keeps_failing_raises_and_the_failure_is_recorded(route, hosted_llm):
    hosted_llm.failures = 10
    with pytest.raises(Exception, match=r"503|overloaded"):
        _streamed()
    with pytest.raises(Exception, match=r"503|overloaded"):
        _astreamed()
    calls = ModelCall.objects.filter(purpose="chat")
    assert calls.count() == 2 and not any(call.ok for call in calls)
    assert all(call.error for call in calls)


def test_an_answer_its_reader_leaves_is_recorded_as_cancelled_not_failed(route, hosted_llm):
    hosted_llm.reply = lambda messages: " ".join(f"w{i}" for i in range(200))
    pieces, _ = _astreamed(stop_after=3)
    assert pieces == ["w0 ", "w1 ", "w2 "]
    stream = ai.text_engine().stream(QUESTION, purpose="chat", owner_id=None)
    assert [next(stream), next(stream)] == ["w0 ", "w1 "]
    stream.close()
    calls = ModelCall.objects.filter(purpose="chat")
    assert calls.count() == 2 and all(call.ok and not call.error for call in calls)


def test_an_answer_is_signed_with_the_models_key_and_nothing_else(route, hosted_llm, settings, monkeypatch):
    _streamed()
    assert hosted_llm.requests[-1]["authorization"] == "Bearer sk-test"
    # Without a key of its own, an organization's admin key in the environment is never offered to the
    # server the model lives on: the answer fails as litellm fails it.
    settings.LLM_API_KEY = ""
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.setenv("OPENAI_ADMIN_KEY", "sk-admin-secret")
    asked = len(hosted_llm.requests)
    with pytest.raises(Exception, match=r"(?i)api.key|auth"):
        _streamed()
    assert all("sk-admin-secret" not in (r["authorization"] or "") for r in hosted_llm.requests[asked:])


def test_a_base_url_from_the_environment_serves_the_answers_as_it_serves_other_calls(
    route, hosted_llm, settings, monkeypatch
):
    settings.LLM_API_BASE = ""
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("OPENAI_API_BASE", hosted_llm.url)  # litellm's own name for it
    assert "".join(_streamed()) == "one two three four five"
    assert hosted_llm.requests[-1]["body"]["model"] == "test-chat"


@pytest.mark.parametrize(
    ("model", "streams_through_openai"),
    [
        ("openai/test-chat", True),  # any OpenAI-compatible server
        ("gpt-4o-mini", True),  # OpenAI itself
        ("anthropic/claude-3-5-sonnet", False),
        ("ollama/llama3.1", False),  # Ollama's own API, not its /v1
    ],
)
def test_which_answers_stream_through_the_openai_client(model, streams_through_openai, settings):
    settings.LLM_STREAM_OPENAI_CLIENT = True
    engine = LiteLLMEngine(model=model, api_base="http://127.0.0.1:9/v1", api_key="k", timeout=5, retries=0)
    route = engine._route()
    assert (route is not None) == streams_through_openai
    if route is not None:
        assert route.model == model.removeprefix("openai/") and route.base_url == "http://127.0.0.1:9/v1"
    settings.LLM_STREAM_OPENAI_CLIENT = False
    assert engine._route() is None
