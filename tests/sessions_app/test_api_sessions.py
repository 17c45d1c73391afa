"""Sessions and messages through the API: create, list, read, rename, delete, bulk-add; bad input is a
clear 4xx in the API's error shape ({"error": {code, message, details}}) and writes nothing."""

from datetime import UTC, datetime

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from sessions_app.models import ChatSession, Message
from tests.factories import ChatSessionFactory, MessageFactory, UserFactory

pytestmark = pytest.mark.django_db


def _create(client, **body):
    response = client.post("/api/sessions", body, format="json")
    assert response.status_code == 201, response.content
    return response.json()


def test_a_session_is_created_with_its_title_agent_and_metadata(auth_client):
    body = _create(auth_client, title="Release planning", agent_id="planner", metadata={"ticket": "OPS-12"})
    assert body["title"] == "Release planning" and body["agent_id"] == "planner"
    assert body["metadata"] == {"ticket": "OPS-12"}
    assert ChatSession.objects.get(id=body["session_id"]).title == "Release planning"


def test_sessions_are_listed_newest_activity_first_with_pages(auth_client):
    first = _create(auth_client, title="first")
    second = _create(auth_client, title="second")
    auth_client.post(
        f"/api/sessions/{first['session_id']}/messages",
        {"messages": [{"role": "user", "content": "hello again"}]},
        format="json",
    )
    listing = auth_client.get("/api/sessions").json()
    assert listing["count"] == 2
    assert [s["title"] for s in listing["results"]] == ["first", "second"]
    assert listing["results"][0]["message_count"] == 1
    assert auth_client.get("/api/sessions", {"agent_id": "nobody"}).json()["count"] == 0
    assert second["session_id"]


def test_messages_are_recorded_as_given_in_order(auth_client, django_capture_on_commit_callbacks):
    session = _create(auth_client)
    sent = [
        {
            "role": "user",
            "content": "  indented code:\n    x = 1",
            "created_at": "2024-03-01T09:30:00Z",
            "metadata": {"slack_ts": "1709285400.000100"},
        },
        {"role": "assistant", "content": "Noted.", "created_at": "2024-03-01T09:30:05+02:00"},
        {"role": "system", "content": "Summaries follow."},
    ]
    with django_capture_on_commit_callbacks(execute=True):
        response = auth_client.post(
            f"/api/sessions/{session['session_id']}/messages", {"messages": sent}, format="json"
        )
    assert response.status_code == 201
    ids = response.json()["ids"]
    detail = auth_client.get(f"/api/sessions/{session['session_id']}").json()
    messages = detail["messages"]
    assert [m["id"] for m in messages] == ids
    assert [m["seq"] for m in messages] == [1, 2, 3]
    assert messages[0]["content"] == "  indented code:\n    x = 1"
    assert messages[0]["metadata"] == {"slack_ts": "1709285400.000100"}
    assert datetime.fromisoformat(messages[0]["created_at"]) == datetime(2024, 3, 1, 9, 30, tzinfo=UTC)
    assert datetime.fromisoformat(messages[1]["created_at"]) == datetime(2024, 3, 1, 7, 30, 5, tzinfo=UTC)
    # The worker embeds what was said once it is committed; a system turn is the product's own text,
    # which recall leaves out, so it is never embedded.
    assert [m["embedded"] for m in messages] == [True, True, False]
    assert detail["archives"] == []


def test_appends_continue_the_sequence(auth_client):
    session = _create(auth_client)
    url = f"/api/sessions/{session['session_id']}/messages"
    auth_client.post(url, {"messages": [{"role": "user", "content": "one"}]}, format="json")
    auth_client.post(
        url, {"messages": [{"role": "user", "content": "two"}, {"role": "user", "content": "3"}]}, format="json"
    )
    assert list(Message.objects.order_by("seq").values_list("seq", "content")) == [(1, "one"), (2, "two"), (3, "3")]


def test_a_thousand_messages_in_one_call_are_accepted(auth_client, settings):
    session = _create(auth_client)
    batch = [{"role": "user" if i % 2 else "assistant", "content": f"turn {i}"} for i in range(1000)]
    response = auth_client.post(f"/api/sessions/{session['session_id']}/messages", {"messages": batch}, format="json")
    assert response.status_code == 201 and len(response.json()["ids"]) == 1000


def test_a_failing_embedding_never_loses_a_message(auth_client, settings, fake_llm, django_capture_on_commit_callbacks):
    settings.EMBEDDING_MODEL, settings.EMBEDDING_API_BASE = "openai/test-embed", fake_llm.url
    settings.EMBEDDING_MAX_RETRIES = 0
    settings.CELERY_TASK_EAGER_PROPAGATES = False
    fake_llm.failures = 100
    session = _create(auth_client)
    with django_capture_on_commit_callbacks(execute=True):
        response = auth_client.post(
            f"/api/sessions/{session['session_id']}/messages",
            {"messages": [{"role": "user", "content": "keep me"}]},
            format="json",
        )
    assert response.status_code == 201
    message = Message.objects.get()
    assert message.content == "keep me" and message.embedding is None


def test_rename_and_replace_metadata(auth_client):
    session = _create(auth_client, title="old")
    response = auth_client.patch(
        f"/api/sessions/{session['session_id']}", {"title": "new", "metadata": {"a": 1}}, format="json"
    )
    assert response.status_code == 200
    assert response.json()["title"] == "new" and response.json()["metadata"] == {"a": 1}


def test_delete_removes_the_session_and_its_messages(auth_client):
    session = _create(auth_client)
    auth_client.post(
        f"/api/sessions/{session['session_id']}/messages",
        {"messages": [{"role": "user", "content": "bye"}]},
        format="json",
    )
    assert auth_client.delete(f"/api/sessions/{session['session_id']}").status_code == 204
    assert not ChatSession.objects.exists() and not Message.objects.exists()
    assert auth_client.get(f"/api/sessions/{session['session_id']}").status_code == 404


def test_reading_a_session_costs_the_same_queries_however_long_it_is(auth_client, user, django_assert_max_num_queries):
    session = ChatSessionFactory(owner=user)
    MessageFactory.create_batch(3, session=session)
    with django_assert_max_num_queries(8) as captured:
        auth_client.get(f"/api/sessions/{session.id}")
    MessageFactory.create_batch(50, session=session)
    with django_assert_max_num_queries(len(captured.captured_queries)):
        auth_client.get(f"/api/sessions/{session.id}")


# --- Who may see what -------------------------------------------------------------------------------------


@pytest.fixture
def someone_elses_session():
    session = ChatSessionFactory(owner=UserFactory(), title="private")
    MessageFactory(session=session, content="secret")
    return session


@pytest.mark.parametrize(
    ("method", "suffix", "body"),
    [
        ("get", "", None),
        ("patch", "", {"title": "mine now"}),
        ("delete", "", None),
        ("post", "/messages", {"messages": [{"role": "user", "content": "hi"}]}),
        ("post", "/commit", {}),
        ("get", "/context", None),
        ("get", "/history", None),
        ("get", "/working-set", None),
    ],
)
def test_another_users_session_is_not_found_on_every_endpoint(auth_client, someone_elses_session, method, suffix, body):
    response = getattr(auth_client, method)(f"/api/sessions/{someone_elses_session.id}{suffix}", body, format="json")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "session_not_found"
    someone_elses_session.refresh_from_db()
    assert someone_elses_session.title == "private" and someone_elses_session.messages.count() == 1


def test_another_users_sessions_are_not_listed(auth_client, someone_elses_session):
    assert auth_client.get("/api/sessions").json()["count"] == 0


def test_without_credentials_nothing_is_served():
    client = APIClient()
    response = client.get("/api/sessions")
    assert response.status_code == 401
    assert response.json()["error"]["code"] == "not_authenticated"
    client.credentials(HTTP_AUTHORIZATION="Token not-a-real-token")
    assert client.get("/api/sessions").json()["error"]["code"] == "authentication_failed"


def test_a_valid_token_for_one_user_cannot_reach_anothers_session(someone_elses_session):
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=UserFactory()).key}")
    assert client.get(f"/api/sessions/{someone_elses_session.id}").status_code == 404


# --- Bad input --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("session_id", ["not-a-uuid", "00000000-0000-0000-0000-000000000000", "1' OR '1'='1"])
def test_an_unknown_or_malformed_session_id_is_a_404(auth_client, session_id):
    response = auth_client.get(f"/api/sessions/{session_id}")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "session_not_found"


@pytest.mark.parametrize(
    ("messages", "field"),
    [
        ([], "messages"),
        ([{"role": "user", "content": ""}], "content"),
        ([{"role": "user", "content": "   \n\t"}], "content"),
        ([{"role": "user", "content": "x" * 100_001}], "content"),
        ([{"role": "user", "content": "nul \x00 byte"}], "content"),
        ([{"role": "robot", "content": "beep"}], "role"),
        ([{"content": "no role"}], "role"),
        ([{"role": "user", "content": "when?", "created_at": "yesterday at noon"}], "created_at"),
        ([{"role": "user", "content": "when?", "created_at": "2024-13-45T99:00:00Z"}], "created_at"),
        ([{"role": "user", "content": "meta", "metadata": ["not", "an", "object"]}], "metadata"),
        ([{"role": "user", "content": "meta", "metadata": {"k": "nul \x00"}}], "metadata"),
        ([{"role": "user", "content": "ok"}] * 1000 + [{"role": "user", "content": "one too many"}], "messages"),
    ],
    ids=[
        "none",
        "empty",
        "blank",
        "oversized",
        "nul",
        "bad-role",
        "no-role",
        "prose-date",
        "impossible-date",
        "metadata-list",
        "metadata-nul",
        "1001",
    ],
)
def test_bad_messages_are_refused_whole_and_nothing_is_written(auth_client, messages, field):
    session = _create(auth_client)
    good_then_bad = messages if field == "messages" else [{"role": "user", "content": "fine"}, *messages]
    response = auth_client.post(
        f"/api/sessions/{session['session_id']}/messages", {"messages": good_then_bad}, format="json"
    )
    assert response.status_code == 400, response.content
    error = response.json()["error"]
    assert error["code"] == "invalid" and field in error["message"]
    assert not Message.objects.exists()


@pytest.mark.parametrize(
    "body",
    [{"title": "t" * 256}, {"metadata": "a string"}, {"agent_id": "a" * 129}, {"title": "nul\x00"}],
)
def test_bad_session_fields_are_refused(auth_client, body):
    response = auth_client.post("/api/sessions", body, format="json")
    assert response.status_code == 400
    assert response.json()["error"]["code"] == "invalid"
    assert not ChatSession.objects.exists()


def test_a_body_that_is_not_an_object_is_refused(auth_client):
    session = _create(auth_client)
    response = auth_client.post(f"/api/sessions/{session['session_id']}/messages", ["a", "list"], format="json")
    assert response.status_code == 400


def test_a_page_past_the_end_is_a_404_in_the_error_shape(auth_client):
    response = auth_client.get("/api/sessions", {"page": 99})
    assert response.status_code == 404 and response.json()["error"]["code"] == "not_found"


def test_unicode_postgresql_cannot_store_is_a_400_not_a_500(auth_client):
    session = _create(auth_client)
    body = '{"messages": [{"role": "user", "content": "hi", "metadata": {"a": "\\ud800"}}]}'
    response = auth_client.post(
        f"/api/sessions/{session['session_id']}/messages", body, content_type="application/json"
    )
    assert response.status_code == 400 and "metadata" in response.json()["error"]["message"]
    assert not Message.objects.exists()


def test_a_request_body_over_the_limit_is_refused_before_it_is_read(auth_client, settings):
    session = _create(auth_client)
    settings.API_MAX_BODY_BYTES = 2048
    batch = [{"role": "user", "content": "x" * 500} for _ in range(10)]
    response = auth_client.post(f"/api/sessions/{session['session_id']}/messages", {"messages": batch}, format="json")
    assert response.status_code == 413 and response.json()["error"]["code"] == "too_large"
    assert not Message.objects.exists()
