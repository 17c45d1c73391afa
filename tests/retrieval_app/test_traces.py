"""What a turn, a search and a recall leave for operators: a trace with how it ended, its timings per
stage (the dashboard's percentiles) and what it returned; and model calls counted against the
conversation they served (its cost)."""

import pytest

from foundation.models import ModelCall
from foundation.tracing import STAGE_LABELS
from retrieval_app.models import SearchTrace
from sessions_app.models import Message

pytestmark = pytest.mark.django_db


def _chat(client, message: str, **extra) -> dict:
    response = client.post("/api/ai/chat", {"message": message, **extra}, format="json")
    assert response.status_code == 200, response.content
    return response.json()


def test_a_chat_turn_trace_times_every_stage_up_to_the_whole_turn(auth_client, library):
    answer = _chat(auth_client, "How often should I descale the kettle?")
    trace = SearchTrace.objects.get(kind="chat")
    assert trace.outcome == "ok" and not trace.error
    for stage in ("embedding", "dense", "keyword", "fusion", "descent", "search", "prompt", "first_token", "turn"):
        assert stage in trace.timings, stage
    assert set(trace.timings) <= set(STAGE_LABELS)
    assert trace.timings["first_token"] <= trace.timings["turn"]
    assert trace.timings["search"] <= trace.timings["turn"]
    # What was returned, linkable: the passage's document, its title and score.
    assert trace.results and trace.results[0]["doc_id"] in {str(d.id) for d in library.values()}
    assert trace.results[0]["title"] and trace.results[0]["score"] > 0
    stored = Message.objects.get(session_id=answer["session_id"], role="assistant")
    assert stored.metadata["trace_id"] == str(trace.id)


def test_a_turn_whose_search_failed_still_leaves_a_trace_saying_why(auth_client, library, monkeypatch):
    from chat_app import services as pipeline

    def broken(**kwargs):
        raise RuntimeError("the index is on fire")

    monkeypatch.setattr(pipeline, "retrieval_search", broken)
    answer = _chat(auth_client, "How often should I descale the kettle?")
    assert "index is on fire" in answer["retrieval_error"]
    trace = SearchTrace.objects.get(kind="chat")
    assert trace.outcome == "retrieval_failed" and "index is on fire" in trace.error
    assert str(trace.session_id) == answer["session_id"]
    assert "turn" in trace.timings


def test_a_failed_generation_is_the_traces_outcome(auth_client, library, hosted_llm):
    hosted_llm.failures = 10
    auth_client.post("/api/ai/chat", {"message": "How do I descale the kettle?"}, format="json")
    trace = SearchTrace.objects.get(kind="chat")
    assert trace.outcome == "generation_failed" and trace.error


def test_model_calls_are_counted_against_the_conversation_they_served(auth_client, library, hosted_llm):
    hosted_llm.reply = lambda messages: "Every four weeks."
    answer = _chat(auth_client, "How often should I descale the kettle?")
    session_id = answer["session_id"]
    chat = ModelCall.objects.get(purpose="chat")
    assert str(chat.session_id) == session_id and chat.output_tokens > 0
    embeddings = ModelCall.objects.filter(purpose="chat_query")
    assert embeddings and {str(call.session_id) for call in embeddings} == {session_id}
    response = auth_client.post(f"/api/sessions/{session_id}/commit", {}, format="json")
    assert response.status_code == 200
    # The model's reply was no overview, so the built-in engine stood in: both calls are the session's.
    overviews = ModelCall.objects.filter(purpose="archive_overview")
    assert {(call.backend, str(call.session_id)) for call in overviews} == {
        ("litellm", session_id),
        ("extractive", session_id),
    }
    # Documents' indexing served no conversation.
    assert not ModelCall.objects.filter(purpose="document_embedding", session_id__isnull=False).exists()


def test_a_recall_leaves_a_trace_with_its_retrievers_timed(auth_client, user):
    session = auth_client.post("/api/sessions", {"title": "kitchen"}, format="json").json()["session_id"]
    auth_client.post(
        f"/api/sessions/{session}/messages",
        {"messages": [{"role": "user", "content": "The Aurora kettle needs descaling every four weeks."}]},
        format="json",
    )
    response = auth_client.post("/api/memory/recall", {"query": "descaling the kettle"}, format="json")
    assert response.status_code == 200 and response.json()["count"] == 1
    trace = SearchTrace.objects.get(kind="recall")
    assert trace.owner == user and trace.result_count == 1
    assert {"embedding", "dense", "keyword", "fusion", "search"} <= set(trace.timings)
    assert trace.results[0]["session_id"] == session and "descaling" in trace.results[0]["text"]
