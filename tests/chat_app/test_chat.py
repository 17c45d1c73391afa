"""Chat over REST and server-sent events: multi-turn conversations with follow-ups resolved and
documents cited, litellm over real HTTP to a loopback server, the built-in engine's quoted answers,
fallbacks when retrieval or generation fails, and bad input refused before anything is written."""

from __future__ import annotations

import json
from unittest import mock

import psycopg
import pytest
from asgiref.sync import async_to_sync
from django.db import OperationalError, connection
from django.test import AsyncClient
from rest_framework.authtoken.models import Token

from chat_app import services as retrieval
from foundation.models import ModelCall
from retrieval_app.models import SearchTrace
from sessions_app import services as sessions_services
from sessions_app.models import ChatSession, Message
from sessions_app.services import messages as messages_services
from tests.factories import UserFactory, index_document
from tests.helpers import database_session
from tests.samples import KETTLE

pytestmark = pytest.mark.django_db


def _chat(client, **body):
    return client.post("/api/ai/chat", body, format="json")


def test_a_multi_turn_conversation_without_a_model_quotes_what_it_retrieved(auth_client, user, library):
    first = _chat(auth_client, message="Tell me about the Aurora kettle.")
    assert first.status_code == 200, first.json()
    body = first.json()
    session_id = body["session_id"]
    assert ChatSession.objects.filter(id=session_id, owner=user).exists()
    assert "quoted as retrieved (not generated)" in body["message"]
    assert "No language model is configured" not in body["message"], "the chat page says that once, not each answer"
    assert body["context"] and all(item["uri"] in body["message"] for item in body["context"])

    second = _chat(
        auth_client, message="How often should I descale it?", session_id=session_id, debug_search_trace=True
    )
    body = second.json()
    assert "four weeks" in body["message"], body["message"]
    assert f"documents/{library['kettle'].id}" in body["message"]  # cited by URI
    rewrite = next(s for s in body["search_trace"]["stages"] if s["stage"] == "rewrite")
    assert rewrite["rewritten"] and "kettle" in rewrite["query"].lower()
    assert any(s["stage"] == "prompt_budget" for s in body["search_trace"]["stages"])

    messages = list(Message.objects.filter(session_id=session_id).order_by("seq").values_list("role", "metadata"))
    assert [role for role, _ in messages] == ["user", "assistant", "user", "assistant"]
    assert messages[-1][1]["source"] == "retrieved" and messages[-1][1]["status"] == "complete"
    assert SearchTrace.objects.filter(session_id=session_id, kind="chat").count() == 2


def test_chat_scoped_to_a_document_uses_only_that_document(auth_client, library):
    body = _chat(auth_client, message="warranty", doc_id=str(library["router"].id)).json()
    assert body["context"]
    assert {item["doc_id"] for item in body["context"] if item["doc_id"]} == {str(library["router"].id)}


def test_with_a_model_the_answer_is_generated_from_the_assembled_prompt(auth_client, library, hosted_llm, fake_llm):
    fake_llm.reply = lambda messages: "Descale it every four weeks [kettle]."
    body = _chat(auth_client, message="How often do I descale the Aurora kettle?").json()
    assert body["message"] == "Descale it every four weeks [kettle]."
    chat_requests = [
        r for r in fake_llm.requests if r["path"].endswith("/chat/completions") and r["body"].get("stream")
    ]
    prompt = chat_requests[-1]["body"]["messages"]
    assert prompt[0]["role"] == "system" and "Context:" in prompt[0]["content"]
    assert prompt[-1] == {"role": "user", "content": "How often do I descale the Aurora kettle?"}
    assert ModelCall.objects.filter(purpose="chat", ok=True).exists()
    assistant = Message.objects.filter(session_id=body["session_id"], role="assistant").get()
    assert assistant.metadata["source"] == "generated"


def test_when_generation_fails_the_user_turn_is_kept_and_the_error_is_readable(
    auth_client, library, hosted_llm, fake_llm
):
    fake_llm.failures = 100
    response = _chat(auth_client, message="How often do I descale the Aurora kettle?")
    assert response.status_code == 503
    error = response.json()["error"]
    assert error["code"] == "generation_failed" and "your message was saved" in error["message"]
    session_id = error["details"]["session_id"]
    assert list(Message.objects.filter(session_id=session_id).values_list("role", "content")) == [
        ("user", "How often do I descale the Aurora kettle?")
    ]


def test_when_retrieval_fails_the_chat_still_answers_and_says_why(auth_client, library, monkeypatch):
    def broken(**kwargs):
        raise RuntimeError("index unavailable")

    monkeypatch.setattr(retrieval, "retrieval_search", broken)
    body = _chat(auth_client, message="How often do I descale the Aurora kettle?").json()
    assert "index unavailable" in body["retrieval_error"]
    assert body["context"] == [] and "found nothing" in body["message"]


def test_a_new_session_takes_the_clients_history_once(auth_client):
    history = [{"role": "user", "content": "My name is Ada."}, {"role": "assistant", "content": "Hello Ada."}]
    body = _chat(auth_client, message="What is my name?", history=history).json()
    rows = list(Message.objects.filter(session_id=body["session_id"]).order_by("seq").values_list("role", "content"))
    assert rows[:3] == [("user", "My name is Ada."), ("assistant", "Hello Ada."), ("user", "What is my name?")]


@pytest.mark.parametrize(
    "body,status,code",
    [
        ({"message": ""}, 400, "invalid"),
        ({"message": "   "}, 400, "invalid"),
        ({"message": "x" * 40_000}, 400, "message_too_long"),
        ({"message": "hi", "session_id": "00000000-0000-0000-0000-000000000000"}, 404, "session_not_found"),
        ({"message": "hi", "doc_id": "nope"}, 404, "document_not_found"),
        ({"message": "hi", "history": [{"role": "wizard", "content": "x"}]}, 400, "invalid"),
        ({"message": "hi", "history": "not a list"}, 400, "invalid"),
        ({"message": "hi\x00"}, 400, "invalid"),
        ({}, 400, "invalid"),
    ],
)
def test_bad_chat_input_is_refused_before_anything_is_written(auth_client, body, status, code):
    for path in ("/api/ai/chat", "/api/ai/chat/stream"):
        response = auth_client.post(path, body, format="json")
        assert response.status_code == status, response.content
        assert response.json()["error"]["code"] == code
    assert not Message.objects.exists() and not ChatSession.objects.exists()


def test_another_users_session_is_not_found(auth_client):
    from sessions_app.services import session_create

    theirs = session_create(owner=UserFactory())
    response = _chat(auth_client, message="hello", session_id=str(theirs.id))
    assert response.status_code == 404
    assert not Message.objects.filter(session=theirs).exists()


def _sse(user, body: dict) -> tuple[int, list[tuple[str, dict]]]:
    token = Token.objects.get_or_create(user=user)[0].key

    async def run():
        client = AsyncClient()
        response = await client.post(
            "/api/ai/chat/stream", body, content_type="application/json", headers={"Authorization": f"Token {token}"}
        )
        chunks = [chunk async for chunk in response.streaming_content]
        return response.status_code, response["Content-Type"], b"".join(chunks).decode()

    status, content_type, text = async_to_sync(run)()
    assert content_type.startswith("text/event-stream")
    events = []
    for frame in text.strip().split("\n\n"):
        # Lines starting with ":" are comments (the opening and keep-alives): SSE clients skip them.
        lines = dict(line.split(": ", 1) for line in frame.splitlines() if not line.startswith(":"))
        if lines:
            events.append((lines["event"], json.loads(lines["data"])))
    return status, events


@pytest.mark.django_db(transaction=True)
def test_server_sent_events_arrive_in_the_contracts_order(user):
    index_document(user, "kettle.md", KETTLE)
    status, events = _sse(user, {"message": "How often do I descale the Aurora kettle?"})
    assert status == 200
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "context" and kinds[-1] == "done" and set(kinds[1:-2]) == {"token"} and kinds[-2] == "mood"
    assert "".join(data["token"] for kind, data in events if kind == "token") == events[-1][1]["message"]
    assert "four weeks" in events[-1][1]["message"]
    assert events[-1][1]["remembered"] == [], "a question notes nothing, and says so"
    session_id = events[0][1]["session_id"]
    assert all(data["session_id"] == session_id for _, data in events)


@pytest.mark.django_db(transaction=True)
def test_a_model_that_dies_mid_stream_gives_an_error_event_and_loses_nothing(user, hosted_llm, fake_llm):
    fake_llm.reply = lambda messages: "one two three four five six seven eight nine ten"
    fake_llm.break_after = 3
    status, events = _sse(user, {"message": "Count to ten, please."})
    assert status == 200  # the stream had started: the failure arrives as an event
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "context" and kinds[-1] == "error", kinds
    assert "your message was saved" in events[-1][1]["error"]
    session_id = events[0][1]["session_id"]
    rows = list(Message.objects.filter(session_id=session_id).order_by("seq"))
    assert rows[0].role == "user" and rows[0].content == "Count to ten, please."
    # The words that did arrive are kept, marked as a failed partial answer.
    assert rows[1].role == "assistant" and rows[1].content == "one two three "
    assert rows[1].metadata["status"] == "failed"
    # The model call is on record as failed, under the conversation it served.
    call = ModelCall.objects.get(purpose="chat")
    assert not call.ok and "IncompleteAnswer" in call.error and str(call.session_id) == session_id


@pytest.mark.django_db(transaction=True)
def test_a_streamed_answer_is_recorded_whole_with_its_model_call(user, hosted_llm, fake_llm):
    fake_llm.reply = lambda messages: "one two three four five six seven eight nine ten"
    status, events = _sse(user, {"message": "Count to ten, please."})
    assert status == 200
    kinds = [kind for kind, _ in events]
    assert kinds[0] == "context" and kinds[-1] == "done" and "mood" in kinds, kinds
    said = "".join(data["token"] for kind, data in events if kind == "token")
    assert said == events[-1][1]["message"] == "one two three four five six seven eight nine ten"
    session_id = events[0][1]["session_id"]
    answer = Message.objects.get(session_id=session_id, role="assistant")
    assert answer.content == said and answer.metadata["status"] == "complete"
    call = ModelCall.objects.get(purpose="chat")
    assert call.ok and call.output_tokens > 0 and str(call.session_id) == session_id
    trace = SearchTrace.objects.get(session_id=session_id, kind="chat")
    assert trace.outcome == "ok" and trace.timings["first_token"] <= trace.timings["turn"]


def test_a_doc_id_in_upper_case_still_scopes_the_chat(auth_client, library):
    body = _chat(auth_client, message="warranty", doc_id=str(library["kettle"].id).upper()).json()
    assert "retrieval_error" not in body
    assert {item["doc_id"] for item in body["context"] if item["doc_id"]} == {str(library["kettle"].id)}


def test_asking_again_in_a_new_chat_quotes_the_documents_not_the_earlier_chat(auth_client, user, library):
    question = "How often should I descale the Aurora kettle?"
    first = _chat(auth_client, message=question).json()
    assert first["context"]
    again = _chat(auth_client, message=question).json()  # a new session: the first is an earlier conversation
    assert again["session_id"] != first["session_id"]
    origins = [item["origin"] for item in again["context"]]
    assert "conversation" not in origins, "neither the repeated question nor the quoted answer comes back"
    assert again["context"][0]["origin"] == "document"
    assert "viking://session/" not in again["message"], "every quote is from a document, none from a chat"
    assert again["message"] == first["message"], "asking again gives the same answer, not a worse one"


def _ended_by_the_server(statement_start: str):
    """An execute wrapper under which the server ends the session (as a restart or an operator would)
    the first time a statement starting with ``statement_start`` is about to run on it."""
    ended: list[int] = []

    def wrapper(execute, sql, params, many, context):
        if not ended and sql.startswith(statement_start):
            pid = context["connection"].connection.info.backend_pid
            with database_session() as other:
                other.execute("SELECT pg_terminate_backend(%s, 5000)", [pid])
            ended.append(pid)
        return execute(sql, params, many, context)

    return wrapper, ended


@pytest.mark.django_db(transaction=True)
def test_an_answer_whose_database_connection_goes_while_it_is_recorded_is_kept(auth_client, library):
    wrapper, ended = _ended_by_the_server('INSERT INTO "retrieval_app_searchtrace"')
    with connection.execute_wrapper(wrapper):
        answer = _chat(auth_client, message="How often should I descale the Aurora kettle?")
    assert ended, "the server ended the session while the answer was being recorded"
    assert answer.status_code == 200, answer.json()
    body = answer.json()
    stored = Message.objects.filter(session_id=body["session_id"]).order_by("seq")
    assert [(m.role, m.content) for m in stored] == [
        ("user", "How often should I descale the Aurora kettle?"),
        ("assistant", body["message"]),
    ]
    trace = SearchTrace.objects.get(session_id=body["session_id"])
    assert trace.outcome == SearchTrace.Outcome.OK and "turn" in trace.timings


def _lost_once_after(function, *, when=lambda **kwargs: True, then=lambda **kwargs: None):
    """``function``, which the first time ``when`` holds does its work and then loses its connection
    (as when the server's acknowledgement of a commit never arrives); ``then`` runs before the loss."""
    lost: list[bool] = []

    def wrapped(**kwargs):
        result = function(**kwargs)
        if not lost and when(**kwargs):
            lost.append(True)
            then(**kwargs)
            raise OperationalError("server closed the connection") from psycopg.OperationalError("closed")
        return result

    return wrapped, lost


@pytest.mark.django_db(transaction=True)
def test_an_answer_stored_before_its_connection_went_is_not_stored_twice(auth_client, library, monkeypatch):
    store, lost = _lost_once_after(
        sessions_services.message_bulk_create, when=lambda **kwargs: kwargs["messages"][0].role == "assistant"
    )
    monkeypatch.setattr(sessions_services, "message_bulk_create", store)
    answer = _chat(auth_client, message="How often should I descale the Aurora kettle?")
    assert lost and answer.status_code == 200, answer.json()
    roles = list(Message.objects.filter(session_id=answer.json()["session_id"]).values_list("role", flat=True))
    assert roles == ["user", "assistant"]


@pytest.mark.django_db(transaction=True)
def test_what_an_answer_stored_before_its_connection_went_needs_done_is_still_done(
    auth_client, library, monkeypatch, settings
):
    # The second answer is the session's fourth message: past a chat's window of three (which keeps it folded
    # at once), not yet past what an import's append would wait for (six).
    settings.HISTORY_MAX_TURNS = 3
    appended = sessions_services.message_bulk_create
    answers = []

    def appended_but_jobs_lost(**kwargs):
        if kwargs["messages"][0].role == "assistant":
            answers.append(True)
        if len(answers) < 2 or lost:
            return appended(**kwargs)
        # Committed, but the connection went with the acknowledgement: the jobs it queued went too.
        with mock.patch.object(messages_services, "enqueue_on_commit", lambda *args: None):
            return appended(**kwargs)

    store, lost = _lost_once_after(appended_but_jobs_lost, when=lambda **kwargs: len(answers) == 2)
    monkeypatch.setattr(sessions_services, "message_bulk_create", store)
    first = _chat(auth_client, message="How often should I descale the Aurora kettle?")
    assert first.status_code == 200 and not lost, first.json()
    session = ChatSession.objects.get(pk=first.json()["session_id"])
    assert session.summary_through_seq == 0, "two messages fit the window"
    second = _chat(auth_client, message="And what goes in the kettle to descale it?", session_id=str(session.pk))
    assert lost and second.status_code == 200, second.json()
    session.refresh_from_db()
    assert session.summary_through_seq >= 1 and session.rolling_summary, "the history was folded all the same"
    assert Message.objects.filter(session=session, role="assistant").count() == 2


@pytest.mark.django_db(transaction=True)
def test_a_trace_stored_before_its_connection_went_is_written_over_not_refused(auth_client, library, monkeypatch):
    def as_if_unsaved(*, trace, **kwargs):
        trace._state.adding = True  # the insert was committed, but its answer never came back

    finish, lost = _lost_once_after(retrieval.search_trace_finish, then=as_if_unsaved)
    monkeypatch.setattr(retrieval, "search_trace_finish", finish)
    answer = _chat(auth_client, message="How often should I descale the Aurora kettle?")
    assert lost and answer.status_code == 200, answer.json()
    trace = SearchTrace.objects.get(session_id=answer.json()["session_id"])
    assert trace.outcome == SearchTrace.Outcome.OK and "turn" in trace.timings
    assert Message.objects.filter(session_id=answer.json()["session_id"], role="assistant").count() == 1
