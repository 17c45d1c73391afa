"""The OpenAPI schema tells the truth: lists are pages, every operation documents its errors in the
error shape, limits the server enforces are stated, and the chat's streams are described."""

import pytest
from django.conf import settings
from django.urls import reverse
from drf_spectacular.generators import SchemaGenerator

from tests.factories import ChatSessionFactory, MemoryFactory


@pytest.fixture(scope="module")
def schema():
    return SchemaGenerator().get_schema(request=None, public=True)


def _operations(schema):
    for path, operations in schema["paths"].items():
        for method, operation in operations.items():
            yield path, method, operation


@pytest.mark.parametrize("path", ["/api/sessions", "/api/documents", "/api/memories"])
def test_lists_are_documented_as_the_pages_they_are(schema, path):
    body = schema["paths"][path]["get"]["responses"]["200"]["content"]["application/json"]["schema"]
    page = schema["components"]["schemas"][body["$ref"].rsplit("/", 1)[-1]]
    assert {"count", "next", "previous", "results"} <= set(page["properties"])
    assert page["properties"]["results"]["type"] == "array"
    assert any(p["name"] == "page" for p in schema["paths"][path]["get"]["parameters"])


def test_every_operation_documents_its_errors_in_the_error_shape(schema):
    error = {"$ref": "#/components/schemas/Error"}
    for path, method, operation in _operations(schema):
        statuses = set(operation["responses"])
        assert {"401", "406"} <= statuses, (method, path)
        if "{" in path:
            assert "404" in statuses, (method, path)
        if "requestBody" in operation:
            assert {"400", "413", "415", "403"} <= statuses, (method, path)
        for status, response in operation["responses"].items():
            if status.startswith("4"):
                assert response["content"]["application/json"]["schema"] == error, (method, path, status)
                example = next(iter(response["content"]["application/json"]["examples"].values()))["value"]
                assert set(example["error"]) == {"code", "message", "details"}
    assert "429" in schema["paths"]["/api/auth/token"]["post"]["responses"]
    for path in ("/api/ai/chat", "/api/ai/chat/stream"):
        assert {"404", "503"} <= set(schema["paths"][path]["post"]["responses"])
    assert set(schema["components"]["schemas"]["Error"]["required"]) == {"error"}


def test_limits_the_server_enforces_are_in_the_schema(schema):
    props = {name: body["properties"] for name, body in schema["components"]["schemas"].items() if "properties" in body}
    message = props["ChatIn"]["message"]
    assert (message["minLength"], message["maxLength"]) == (1, settings.CHAT_MESSAGE_MAX_CHARS)
    assert "white space" in message["description"]
    assert props["FindIn"]["query"]["maxLength"] == settings.QUERY_MAX_CHARS
    assert props["MessageIn"]["content"]["maxLength"] == settings.MESSAGE_MAX_CHARS
    assert props["MessagesIn"]["messages"]["minItems"] == 1 and props["MessagesIn"]["messages"]["maxItems"] == 1000
    assert props["RecallIn"]["max_results"]["minimum"] == 1
    assert props["Message"]["role"]["$ref"].endswith("RoleEnum")


def test_the_stream_and_the_websocket_are_described_with_their_events(schema):
    stream = schema["paths"]["/api/ai/chat/stream"]["post"]["responses"]["200"]["content"]["text/event-stream"]
    answered = stream["examples"]["Answered"]["value"]
    assert answered.startswith("event: context\ndata: {") and "event: token\n" in answered
    assert answered.rstrip().rsplit("\n", 1)[0].endswith("event: done")
    websocket = schema["x-websockets"]["/ws/chat/"]
    assert set(websocket["server_events"]) >= {"context", "token", "done", "error"}
    assert set(websocket["client_messages"]) >= {"chat", "cancel"}
    assert "/ws/chat/" in schema["info"]["description"]


def test_an_empty_category_is_a_wrong_category_not_every_category(auth_client, user):
    MemoryFactory(owner=user, category="profile")
    response = auth_client.get("/api/memories?category=")
    assert response.status_code == 400
    assert response.json()["error"]["details"]["fields"]["category"]
    assert auth_client.get("/api/memories?category=profile").json()["count"] == 1


def test_an_empty_number_or_level_in_a_query_string_is_refused(auth_client, user):
    session = ChatSessionFactory(owner=user)
    assert auth_client.get(f"/api/sessions/{session.id}/context?max_archives=").status_code == 400
    assert auth_client.get(f"/api/fs/read?uri=viking://resources/users/{user.id}&level=").status_code == 400


def test_an_empty_agent_filter_still_means_every_agent(auth_client, user):
    ChatSessionFactory(owner=user, agent_id="bot")
    ChatSessionFactory(owner=user, agent_id="")
    assert auth_client.get(reverse("session-list") + "?agent_id=").json()["count"] == 2
    assert auth_client.get(reverse("session-list") + "?agent_id=bot").json()["count"] == 1
