"""The OpenAI-compatible API at /v1, driven by the real ``openai`` package against a live Daphne: models,
answers whole and streamed, usage, errors as the SDK's exceptions, memory carried from one conversation
to the next, resends that never duplicate a turn, and a configured model answering through /v1."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import httpx
import openai
import pytest
from asgiref.sync import async_to_sync
from django.test import AsyncClient
from rest_framework.authtoken.models import Token

from chat_app.concurrency import turn_slots
from integrations_app.openai_sessions import CHAT_ID_KEY
from sessions_app.models import ChatSession, Memory, Message
from tests.factories import ChatSessionFactory, MessageFactory, UserFactory
from tests.helpers import server_env, start_daphne, stop_processes

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

MODEL_REPLY = "Descale the Aurora kettle every four weeks with citric acid."


@pytest.fixture(scope="module")
def daphne(django_db_setup, django_db_blocker):
    """One Daphne for the module, with the built-in engine."""
    with django_db_blocker.unblock():
        base, process = start_daphne(
            env=server_env(), log=Path(tempfile.mkdtemp(prefix="recollect-openai-")) / "daphne.log"
        )
    yield base
    stop_processes([process])


@pytest.fixture
def person():
    user = UserFactory()
    return user, Token.objects.create(user=user).key


def _client(base: str, key: str, **headers: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=f"{base}/v1", api_key=key, max_retries=0, timeout=60, default_headers=headers)


def _ask(client: openai.OpenAI, messages: list[dict], **options):
    raw = client.chat.completions.with_raw_response.create(model="recollect", messages=messages, **options)
    return raw.parse(), raw.headers


def test_the_models_are_recollect_and_the_users_own_agents(daphne, person):
    user, key = person
    ChatSessionFactory(owner=user, agent_id="kitchen")
    ChatSessionFactory(owner=UserFactory(), agent_id="someone-elses")
    client = _client(daphne, key)

    ids = [model.id for model in client.models.list()]

    assert ids == ["recollect", "recollect:kitchen"]
    assert client.models.retrieve("recollect:kitchen").owned_by == "recollect"
    with pytest.raises(openai.NotFoundError) as unknown:
        client.models.retrieve("recollect:someone-elses")
    assert unknown.value.code == "model_not_found"


def test_an_answer_comes_whole_with_usage_its_session_and_sources(daphne, person):
    user, key = person
    client = _client(daphne, key)

    answer, headers = _ask(client, [{"role": "user", "content": "Hi, I'm Priya and I live in Lisbon."}])

    text = answer.choices[0].message.content
    assert answer.object == "chat.completion" and answer.model == "recollect"
    assert answer.choices[0].finish_reason == "stop" and "Lisbon" in text
    assert answer.usage.completion_tokens > 0 and answer.usage.prompt_tokens > 0
    assert answer.usage.total_tokens == answer.usage.prompt_tokens + answer.usage.completion_tokens
    session = ChatSession.objects.get(owner=user)
    extra = answer.model_extra["recollect"]
    assert headers["x-session-id"] == extra["session_id"] == str(session.id)
    assert [(m.role, m.content) for m in session.messages.order_by("seq")] == [
        ("user", "Hi, I'm Priya and I live in Lisbon."),
        ("assistant", text),
    ]
    assert any("Lisbon" in memory["content"] for memory in extra["remembered"])


def test_a_streamed_answer_is_chunks_ending_with_usage_and_done(daphne, person):
    _, key = person
    client = _client(daphne, key)
    _ask(client, [{"role": "user", "content": "I'm allergic to peanuts."}])

    with httpx.stream(
        "POST",
        f"{daphne}/v1/chat/completions",
        headers={"Authorization": f"Bearer {key}"},
        json={
            "model": "recollect",
            "stream": True,
            "stream_options": {"include_usage": True},
            "messages": [{"role": "user", "content": "What am I allergic to?"}],
        },
        timeout=60,
    ) as response:
        data = [line[len("data: ") :] for line in response.iter_lines() if line.startswith("data: ")]
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/event-stream")
    assert data[-1] == "[DONE]"
    chunks = [json.loads(item) for item in data[:-1]]
    assert {chunk["object"] for chunk in chunks} == {"chat.completion.chunk"}
    assert chunks[0]["choices"][0]["delta"]["role"] == "assistant"
    text = "".join(chunk["choices"][0]["delta"].get("content") or "" for chunk in chunks if chunk["choices"])
    ending, usage = chunks[-2], chunks[-1]
    assert ending["choices"][0]["finish_reason"] == "stop"
    assert usage["choices"] == [] and usage["usage"]["completion_tokens"] > 0
    sources = ending["recollect"]["sources"]
    assert "peanuts" in text and any(source["uri"].startswith("viking://") for source in sources)
    assert response.headers["x-recollect-sources"].split(", ")[0].startswith("viking://")
    stored = Message.objects.get(session_id=ending["recollect"]["session_id"], role="assistant")
    assert stored.content == text


def test_the_sdk_streams_the_same_answer(daphne, person):
    _, key = person
    client = _client(daphne, key)

    stream = client.chat.completions.create(
        model="recollect",
        messages=[{"role": "user", "content": "Hello there!"}],
        stream=True,
        stream_options={"include_usage": True},
    )
    chunks = list(stream)

    text = "".join(chunk.choices[0].delta.content or "" for chunk in chunks if chunk.choices)
    assert text and chunks[-1].usage.total_tokens > 0
    assert chunks[-2].choices[0].finish_reason == "stop"


def test_errors_surface_as_the_sdks_exceptions(daphne, person):
    user, key = person
    stranger_session = ChatSessionFactory(owner=UserFactory(), title="Not yours")
    MessageFactory(session=stranger_session, role="user", content="A stranger's secret.")
    client = _client(daphne, key)
    hello = [{"role": "user", "content": "Hello"}]

    with pytest.raises(openai.AuthenticationError) as bad_key:
        _client(daphne, "not-a-key").chat.completions.create(model="recollect", messages=hello)
    with pytest.raises(openai.NotFoundError) as unknown_model:
        client.chat.completions.create(model="gpt-4o", messages=hello)
    with pytest.raises(openai.BadRequestError) as no_user:
        client.chat.completions.create(model="recollect", messages=[{"role": "system", "content": "Be brief."}])
    with pytest.raises(openai.BadRequestError) as wrong_type:
        client.chat.completions.create(model="recollect", messages=hello, stream="yes")
    with pytest.raises(openai.NotFoundError) as others:
        client.chat.completions.create(
            model="recollect", messages=hello, extra_headers={"X-Session-Id": str(stranger_session.id)}
        )
    with pytest.raises(openai.NotFoundError):
        client.chat.completions.create(
            model="recollect", messages=hello, metadata={"session_id": str(stranger_session.id)}
        )

    assert bad_key.value.status_code == 401 and bad_key.value.code == "invalid_api_key"
    assert unknown_model.value.code == "model_not_found" and unknown_model.value.param == "model"
    assert no_user.value.param == "messages" and no_user.value.type == "invalid_request_error"
    assert wrong_type.value.param == "stream"
    assert others.value.code == "session_not_found" and "secret" not in str(others.value.body)
    assert stranger_session.messages.count() == 1 and not ChatSession.objects.filter(owner=user).exists()


@pytest.mark.parametrize(
    "body, status, param",
    [
        (b"{not json", 400, None),
        (b"[]", 400, None),
        (json.dumps({"model": "recollect", "messages": []}).encode(), 400, "messages"),
        (json.dumps({"model": "recollect", "messages": [{"role": "user", "content": 5}]}).encode(), 400, None),
        (json.dumps({"model": "recollect", "messages": [{"role": "wizard", "content": "x"}]}).encode(), 400, None),
        (json.dumps({"messages": [{"role": "user", "content": "x"}]}).encode(), 400, "model"),
        (json.dumps({"model": "recollect", "messages": [{"role": "user", "content": "x"}], "n": 2}).encode(), 400, "n"),
    ],
)
def test_a_bad_body_is_a_400_in_openais_shape(daphne, person, body, status, param):
    _, key = person
    response = httpx.post(
        f"{daphne}/v1/chat/completions",
        content=body,
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
        timeout=30,
    )
    assert response.status_code == status
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"} and error["type"] == "invalid_request_error"
    if param:
        assert error["param"] == param


def test_an_oversized_body_an_unknown_url_and_no_key_answer_in_openais_shape(daphne, person, settings):
    _, key = person
    headers = {"Authorization": f"Bearer {key}", "Content-Type": "application/json"}
    oversized = httpx.post(
        f"{daphne}/v1/chat/completions",
        content=b" " * (settings.API_MAX_BODY_BYTES + 1),
        headers=headers,
        timeout=30,
    )
    unknown = httpx.get(f"{daphne}/v1/embeddings", headers=headers, timeout=30)
    anonymous = httpx.get(f"{daphne}/v1/models", timeout=30)
    assert oversized.status_code == 413 and oversized.json()["error"]["code"] == "too_large"
    assert set(oversized.json()["error"]) == {"message", "type", "param", "code"}
    assert unknown.status_code == 404 and unknown.json()["error"]["type"] == "invalid_request_error"
    assert anonymous.status_code == 401 and anonymous.json()["error"]["message"].startswith("You didn't provide")


def test_a_memory_said_in_one_conversation_answers_a_new_one(daphne, person):
    user, key = person
    client = _client(daphne, key)
    _ask(client, [{"role": "user", "content": "I'm allergic to peanuts."}])
    memory = Memory.objects.get(owner=user)

    answer, headers = _ask(client, [{"role": "user", "content": "What food should I avoid eating?"}])

    extra = answer.model_extra["recollect"]
    assert ChatSession.objects.filter(owner=user).count() == 2, "a new conversation is a new session"
    assert memory.uri in [source["uri"] for source in extra["sources"]]
    assert memory.uri in headers["x-recollect-sources"]
    assert "peanut" in answer.choices[0].message.content.lower()


def test_a_conversation_resent_as_it_grows_stores_each_message_once(daphne, person):
    user, key = person
    client = _client(daphne, key)
    sent: list[dict] = []
    for question in ("My kettle is an Aurora.", "It is three years old.", "What kettle do I have?"):
        sent.append({"role": "user", "content": question})
        answer, _ = _ask(client, [{"role": "system", "content": "Be helpful."}, *sent])
        sent.append({"role": "assistant", "content": answer.choices[0].message.content})

    session = ChatSession.objects.get(owner=user)
    stored = [(m.role, m.content) for m in session.messages.order_by("seq")]
    assert stored == [(m["role"], m["content"]) for m in sent]
    # The same request again (a retry) answers again in place of the last answer: still each message once.
    _ask(client, sent[:-1])
    assert session.messages.count() == len(sent)
    assert ChatSession.objects.filter(owner=user).count() == 1


def test_a_client_that_names_its_chat_keeps_one_session_per_chat(daphne, person):
    user, key = person
    first = _client(daphne, key, **{"X-OpenWebUI-Chat-Id": "chat-1"})
    answer, headers = _ask(first, [{"role": "user", "content": "Hello"}])
    # Open WebUI's chat may start the same way as another: the chat id keeps them apart.
    _ask(_client(daphne, key, **{"X-OpenWebUI-Chat-Id": "chat-2"}), [{"role": "user", "content": "Hello"}])
    again, _ = _ask(
        first,
        [
            {"role": "user", "content": "Hello"},
            {"role": "assistant", "content": answer.choices[0].message.content},
            {"role": "user", "content": "I live in Porto."},
        ],
    )

    session = ChatSession.objects.get(id=headers["x-session-id"])
    assert again.model_extra["recollect"]["session_id"] == str(session.id)
    assert session.metadata[CHAT_ID_KEY] == "chat-1" and session.messages.count() == 4
    assert ChatSession.objects.filter(owner=user).count() == 2


def test_a_pinned_session_takes_the_new_turn_of_a_client_without_history(daphne, person):
    user, key = person
    session = ChatSessionFactory(owner=user, title="Kettle")
    MessageFactory(session=session, role="user", content="My kettle is an Aurora.")
    client = _client(daphne, key, **{"X-Session-Id": str(session.id)})

    answer, headers = _ask(client, [{"role": "user", "content": "It is three years old."}])

    assert headers["x-session-id"] == str(session.id)
    assert [m.content for m in session.messages.order_by("seq")][:2] == [
        "My kettle is an Aurora.",
        "It is three years old.",
    ]
    assert answer.model_extra["recollect"]["recorded"] is True


def test_a_clients_own_tasks_are_answered_but_not_recorded(daphne, person):
    user, key = person
    client = _client(daphne, key)
    title_task = (
        "### Task:\nGenerate a concise, 3-5 word title with an emoji summarizing the chat history.\n"
        '### Output:\nJSON format: { "title": "your concise title here" }\n'
        "### Chat History:\n<chat_history>\nUSER: How do I descale my Aurora kettle quickly?\n"
        "ASSISTANT: With citric acid.\n</chat_history>"
    )

    titled, _ = _ask(client, [{"role": "user", "content": title_task}])
    unrecorded, _ = _ask(
        client, [{"role": "user", "content": "I'm allergic to peanuts."}], extra_headers={"X-Recollect-Record": "false"}
    )

    assert json.loads(titled.choices[0].message.content) == {"title": "How do I descale my Aurora"}
    assert unrecorded.model_extra["recollect"] == {
        "session_id": None,
        "recorded": False,
        "sources": [],
        "remembered": [],
        "mood": None,
    }
    assert not ChatSession.objects.filter(owner=user).exists() and not Memory.objects.filter(owner=user).exists()


@pytest.fixture
def model_daphne(fake_llm):
    """A Daphne whose answers come from a configured model (the loopback OpenAI-compatible server)."""
    fake_llm.reply = lambda messages: MODEL_REPLY
    base, process = start_daphne(
        env=server_env(
            LLM_MODEL="openai/test-chat", LLM_API_BASE=fake_llm.url, LLM_API_KEY="sk-test", LLM_MAX_RETRIES="0"
        ),
        log=Path(tempfile.mkdtemp(prefix="recollect-openai-llm-")) / "daphne.log",
    )
    yield base
    stop_processes([process])


def test_a_configured_model_answers_through_v1(model_daphne, fake_llm, person):
    user, key = person
    client = _client(model_daphne, key)

    answer, _ = _ask(client, [{"role": "user", "content": "How often should I descale?"}])
    streamed = client.chat.completions.create(
        model="recollect", messages=[{"role": "user", "content": "And with what?"}], stream=True
    )
    text = "".join(chunk.choices[0].delta.content or "" for chunk in streamed if chunk.choices)

    assert answer.choices[0].message.content == MODEL_REPLY and text == MODEL_REPLY
    prompts = [r["body"]["messages"] for r in fake_llm.requests if r["path"].endswith("/chat/completions")]
    assert any("How often should I descale?" in json.dumps(prompt) for prompt in prompts)
    assert Message.objects.filter(owner=user, role="assistant", content=MODEL_REPLY).count() == 2


def test_a_busy_server_says_so_before_anything_is_answered(person, settings):
    user, key = person
    settings.CHAT_MAX_CONCURRENT_TURNS = 1
    slots = turn_slots()
    assert slots.acquire(blocking=False), "the one slot is taken by an answer in flight"
    try:
        response = async_to_sync(AsyncClient().post)(
            "/v1/chat/completions",
            {"model": "recollect", "stream": True, "messages": [{"role": "user", "content": "Hello"}]},
            content_type="application/json",
            headers={"Authorization": f"Bearer {key}"},
        )
    finally:
        slots.release()
    assert response.status_code == 503 and response.headers["Retry-After"]
    assert response.json()["error"]["code"] == "busy" and response.json()["error"]["type"] == "server_error"
    assert not Message.objects.filter(owner=user, role="assistant").exists()
