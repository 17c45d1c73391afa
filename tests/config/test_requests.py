"""What the API does with hostile or unusual requests: every answer is a 4xx in the API's error shape,
nothing is half-written, and what was refused leaves no trace to break later reads."""

from __future__ import annotations

import json

import pytest
from django.db import OperationalError
from django.test import Client
from psycopg_pool import PoolTimeout
from rest_framework.authtoken.models import Token

from sessions_app.api import views
from sessions_app.models import ChatSession, Message
from tests.factories import ChatSessionFactory, UserFactory
from tests.helpers import free_port

pytestmark = pytest.mark.django_db

DEEP = '{"username":' + "[" * 50_000 + "]" * 50_000 + "}"


@pytest.fixture
def client_and_session():
    user = UserFactory()
    token = Token.objects.create(user=user)
    session = ChatSessionFactory(owner=user)
    return Client(HTTP_AUTHORIZATION=f"Token {token.key}"), session


def _json_post_urls(session: ChatSession) -> list[tuple[str, str]]:
    base = f"/api/sessions/{session.id}"
    return [
        ("post", "/api/auth/token"),
        ("post", "/api/sessions"),
        ("patch", base),
        ("post", f"{base}/messages"),
        ("post", f"{base}/commit"),
        ("post", f"{base}/working-set"),
        ("post", "/api/memory/recall"),
        ("post", "/api/retrieval/find"),
        ("post", "/api/retrieval/search"),
        ("post", "/api/ai/chat"),
        ("post", "/api/ai/chat/stream"),
    ]


def _assert_error_shape(response, status: int, code: str | None = None) -> dict:
    assert response.status_code == status, response.content[:300]
    assert response["Content-Type"].startswith("application/json")
    error = response.json()["error"]
    assert set(error) == {"code", "message", "details"} and error["message"]
    if code:
        assert error["code"] == code
    return error


def test_deeply_nested_json_is_a_400_on_every_json_endpoint(client_and_session):
    client, session = client_and_session
    for method, url in _json_post_urls(session):
        response = getattr(client, method)(url, DEEP, content_type="application/json")
        error = _assert_error_shape(response, 400, "parse_error")
        assert "nested too deeply" in error["message"], (url, error)


def test_a_lone_surrogate_is_refused_and_never_stored(client_and_session):
    client, session = client_and_session
    url = f"/api/sessions/{session.id}/working-set"
    body = '{"resolved_terms": {"\\ud800": "x"}}'
    error = _assert_error_shape(client.post(url, body, content_type="application/json"), 400, "parse_error")
    assert "resolved_terms" in error["message"] and "surrogate" in error["message"]
    assert client.get(url).status_code == 200, "nothing half-written breaks the next read"
    messages = '{"messages": [{"role": "user", "content": "half a pair \\udc00 here"}]}'
    response = client.post(f"/api/sessions/{session.id}/messages", messages, content_type="application/json")
    assert "messages[0].content" in _assert_error_shape(response, 400)["message"]
    assert not Message.objects.filter(session=session).exists()
    paired = '{"messages": [{"role": "user", "content": "a whole pair \\ud83d\\ude00 is fine"}]}'
    assert (
        client.post(f"/api/sessions/{session.id}/messages", paired, content_type="application/json").status_code == 201
    )


def test_a_multipart_upload_without_a_boundary_is_a_400_in_the_error_shape(client_and_session):
    client, _ = client_and_session
    response = client.post("/api/documents/upload", b"--x\r\n", content_type="multipart/form-data")
    _assert_error_shape(response, 400)


def test_a_thousand_message_import_of_several_megabytes_is_accepted(client_and_session):
    client, session = client_and_session
    messages = [{"role": "user", "content": f"Turn {i}: " + "notes on the garden shed " * 120} for i in range(1000)]
    body = json.dumps({"messages": messages})
    assert len(body) > 2_621_440, "bigger than Django's default in-memory limit"
    response = client.post(f"/api/sessions/{session.id}/messages", body, content_type="application/json")
    assert response.status_code == 201, response.content[:300]
    assert Message.objects.filter(session=session).count() == 1000


def test_a_body_over_the_limit_is_a_413_and_nothing_is_stored(client_and_session, settings):
    client, session = client_and_session
    settings.API_MAX_BODY_BYTES = settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100_000
    body = json.dumps({"messages": [{"role": "user", "content": "x" * 60_000}] * 2})
    response = client.post(f"/api/sessions/{session.id}/messages", body, content_type="application/json")
    error = _assert_error_shape(response, 413, "too_large")
    assert error["details"] == {"limit_bytes": 100_000}
    assert not Message.objects.filter(session=session).exists()


def test_an_oversized_query_string_is_a_414_in_the_error_shape(client_and_session):
    client, _ = client_and_session
    _assert_error_shape(client.get("/api/memories", {"category": "x" * 60_000}), 414, "uri_too_long")


def test_while_the_database_is_unreachable_the_api_answers_503_in_json(client_and_session, monkeypatch):
    """The real outage is exercised on a real server in tests/config/test_outages.py; here, every
    kind of unreachable-database error maps to the same answer, for DRF views and for others."""
    client, _ = client_and_session
    for failure in (OperationalError("connection refused"), PoolTimeout("couldn't get a connection after 5 s")):

        def unreachable(*args, failure=failure, **kwargs):
            raise failure

        monkeypatch.setattr(views.services, "session_create", unreachable)
        response = client.post("/api/sessions", {}, content_type="application/json")
        _assert_error_shape(response, 503, "unavailable")
        assert response["Retry-After"] == "5"


@pytest.mark.parametrize(
    ("method", "url", "kwargs", "status"),
    [
        ("get", "/api/ai/chat", {}, 405),
        ("get", "/api/sessions", {"HTTP_ACCEPT": "image/png"}, 406),
        ("post", "/api/sessions", {"data": "title=x", "content_type": "text/plain"}, 415),
        ("get", "/api/no/such/endpoint", {}, 404),
        ("post", "/api/sessions//messages", {"data": {}, "content_type": "application/json"}, 404),
    ],
    ids=["405", "406", "415", "404", "404-post"],
)
def test_protocol_errors_keep_the_error_shape(client_and_session, method, url, kwargs, status):
    client, _ = client_and_session
    client = Client(enforce_csrf_checks=True, HTTP_AUTHORIZATION=client.defaults["HTTP_AUTHORIZATION"])
    _assert_error_shape(getattr(client, method)(url, **kwargs), status)


def test_the_token_endpoint_answers_503_in_json_while_redis_is_unreachable(settings):
    """Its throttle counts attempts in Redis; without Redis it refuses clearly rather than failing open."""
    settings.CACHES = {
        "default": {
            **settings.CACHES["default"],
            "LOCATION": f"redis://127.0.0.1:{free_port()}/0",  # nothing listens there
        }
    }
    response = Client().post("/api/auth/token", {"username": "dana", "password": "x"}, content_type="application/json")
    _assert_error_shape(response, 503, "unavailable")
