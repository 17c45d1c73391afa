"""Whatever a user stored, the operators' pages render it, and what cannot be stored is refused at the door.

Metadata nested past JSON_VALUE_MAX_DEPTH is a clear 400 (900 levels were accepted, then failed every page
showing them); a row kept from before that rule still renders, shown cut. A trace id that is not a UUID is
shown as text, not linked (it made the conversation's page fail). NUL characters and lone surrogates are
refused in keys as in values, so a working-set term cannot break every later search of its session."""

import json

import pytest
from django.core.cache import cache
from django.db.models import JSONField, TextField
from django.db.models.expressions import RawSQL
from django.db.models.functions import Cast
from django.urls import reverse

from foundation.parsers import JSON_VALUE_MAX_DEPTH
from sessions_app.models import ChatSession, Message
from sessions_app.services import working_set_get
from tests.factories import ChatSessionFactory, MessageFactory, UserFactory

pytestmark = pytest.mark.django_db

OLD_DEPTH = 900


def _nested(depth: int) -> dict:
    value: dict = {"leaf": "bottom"}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


def _nested_json(depth: int) -> str:
    return '{"a": ' * (depth - 1) + '{"leaf": "bottom"}' + "}" * (depth - 1)


def _store_raw_metadata(model, pk, text: str) -> None:
    """Writes metadata the way rows were kept before its depth was limited (past the ORM's encoder)."""
    model.objects.filter(pk=pk).update(metadata=RawSQL("%s::jsonb", [text], output_field=JSONField()))


@pytest.fixture
def staff_client(client):
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    return client


def _post_json(client, url, body):
    # Encoded here, not by the test client: a lone surrogate must travel as JSON's "\ud800" escape.
    return client.post(url, data=json.dumps(body), content_type="application/json")


def _post_messages(client, session_id, metadata):
    body = {"messages": [{"role": "user", "content": "hello", "metadata": metadata}]}
    return _post_json(client, f"/api/sessions/{session_id}/messages", body)


def test_metadata_nested_deeper_than_the_limit_is_a_clear_400_and_writes_nothing(auth_client, user):
    session = ChatSessionFactory(owner=user)
    response = _post_messages(auth_client, session.id, _nested(JSON_VALUE_MAX_DEPTH + 1))
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid" and f"more than {JSON_VALUE_MAX_DEPTH} levels" in str(error["details"])
    assert not Message.objects.filter(session=session).exists()
    assert _post_messages(auth_client, session.id, _nested(JSON_VALUE_MAX_DEPTH)).status_code == 201


def test_metadata_900_deep_is_refused_on_every_door(auth_client, user):
    deep = _nested_json(OLD_DEPTH)
    headers = {"content_type": "application/json"}
    created = auth_client.post("/api/sessions", data=f'{{"title": "t", "metadata": {deep}}}', **headers)
    assert created.status_code == 400 and created.json()["error"]["code"]
    session = ChatSessionFactory(owner=user)
    patched = auth_client.patch(f"/api/sessions/{session.id}", data=f'{{"metadata": {deep}}}', **headers)
    assert patched.status_code == 400
    body = f'{{"messages": [{{"role": "user", "content": "x", "metadata": {deep}}}]}}'
    assert auth_client.post(f"/api/sessions/{session.id}/messages", data=body, **headers).status_code == 400
    assert ChatSession.objects.get(pk=session.pk).metadata == {}


def test_oversized_metadata_is_a_clear_400(auth_client, user, settings):
    session = ChatSessionFactory(owner=user)
    response = _post_messages(auth_client, session.id, {"notes": "x" * (settings.METADATA_MAX_BYTES + 1)})
    assert response.status_code == 400
    assert "limit" in str(response.json()["error"]["details"])


@pytest.mark.parametrize(
    "metadata", [{"ke\u0000y": "v"}, {"k": ["fine", "n\u0000ul"]}, {"k": {"deeper": "\ud800"}}, {"\udfff": 1}]
)
def test_keys_and_values_with_nul_or_a_lone_surrogate_are_refused(auth_client, user, metadata):
    session = ChatSessionFactory(owner=user)
    response = _post_messages(auth_client, session.id, metadata)
    assert response.status_code == 400
    assert not Message.objects.filter(session=session).exists()


def test_an_old_deep_row_and_a_non_uuid_trace_id_still_render_on_the_operators_pages(staff_client):
    owner = UserFactory()
    session = ChatSessionFactory(title="kept before the limit", owner=owner)
    message = MessageFactory(session=session, content="with odd metadata", metadata={"trace_id": "not-a-uuid"})
    deep = MessageFactory(session=session, content="deep metadata")
    _store_raw_metadata(Message, deep.pk, _nested_json(OLD_DEPTH))
    _store_raw_metadata(ChatSession, session.pk, _nested_json(OLD_DEPTH))

    page = staff_client.get(reverse("ops-session", args=[session.pk]))
    assert page.status_code == 200
    text = page.content.decode()
    assert "not-a-uuid" in text and "with odd metadata" in text
    assert f"nested deeper than {JSON_VALUE_MAX_DEPTH} levels; not shown" in text

    for url in (
        reverse("admin:sessions_app_chatsession_change", args=[session.pk]),
        reverse("admin:sessions_app_message_change", args=[deep.pk]),
        reverse("admin:sessions_app_message_change", args=[message.pk]),
        reverse("admin:sessions_app_chatsession_changelist"),
        reverse("admin:sessions_app_message_changelist"),
    ):
        assert staff_client.get(url).status_code == 200, url

    # Its owner reads it too, the deep part cut the same way.
    staff_client.force_login(owner)
    detail = staff_client.get(f"/api/sessions/{session.pk}")
    assert detail.status_code == 200
    assert detail.content.decode().count(f"nested deeper than {JSON_VALUE_MAX_DEPTH} levels") == 2  # session, message
    assert staff_client.get("/api/sessions").status_code == 200


def test_renaming_a_conversation_in_the_admin_keeps_its_deep_metadata_as_stored(staff_client):
    session = ChatSessionFactory(title="old name")
    _store_raw_metadata(ChatSession, session.pk, _nested_json(OLD_DEPTH))
    stored = ChatSession.objects.annotate(text=Cast("metadata", TextField())).get(pk=session.pk).text
    url = reverse("admin:sessions_app_chatsession_change", args=[session.pk])
    assert staff_client.post(url, {"title": "new name"}).status_code == 302
    after = ChatSession.objects.annotate(text=Cast("metadata", TextField())).values("title", "text").get(pk=session.pk)
    assert after == {"title": "new name", "text": stored}


def test_a_trace_id_that_is_a_uuid_links_to_its_trace(staff_client):
    trace_id = "0b8e4a52-5f3e-4c1e-9a55-2d8f8a6f0c11"
    message = MessageFactory(metadata={"trace_id": trace_id})
    page = staff_client.get(reverse("ops-session", args=[message.session_id]))
    assert reverse("ops-trace", args=[trace_id]) in page.content.decode()


def test_an_operator_cannot_type_metadata_deeper_than_the_limit(staff_client):
    session = ChatSessionFactory(title="kept")
    url = reverse("admin:sessions_app_chatsession_change", args=[session.pk])
    answer = staff_client.post(url, {"title": "renamed", "metadata": _nested_json(JSON_VALUE_MAX_DEPTH + 1)})
    assert answer.status_code == 200 and f"more than {JSON_VALUE_MAX_DEPTH} levels" in answer.content.decode()
    assert ChatSession.objects.get(pk=session.pk).title == "kept"


def test_a_working_set_term_with_nul_is_refused_and_the_session_keeps_searching(auth_client, user):
    session = ChatSessionFactory(owner=user)
    url = f"/api/sessions/{session.id}/working-set"
    refused = auth_client.post(url, {"resolved_terms": {"it\u0000": "x"}}, format="json")
    assert refused.status_code == 400 and "NUL" in str(refused.json()["error"]["details"])
    assert _post_json(auth_client, url, {"resolved_terms": {"\ud800": "x"}}).status_code == 400
    assert working_set_get(session_id=str(session.id)).resolved_terms == {}
    kept = auth_client.post(url, {"resolved_terms": {"it": "the Aurora kettle"}}, format="json")
    assert kept.status_code == 200
    search = auth_client.post(
        "/api/retrieval/search", {"query": "descaling", "session_id": str(session.id)}, format="json"
    )
    assert search.status_code == 200


def test_a_working_set_kept_before_the_rule_is_read_without_its_unstorable_terms():
    # The state an earlier version let through, as Redis holds it.
    session_id = "0b8e4a52-5f3e-4c1e-9a55-2d8f8a6f0c12"
    cache.set(
        f"working-set:{session_id}",
        {
            "resolved_terms": {"it\u0000": "x", "it": "the kettle"},
            "active_documents": ["a\u0000"],
            "active_sections": [],
        },
        60,
    )
    state = working_set_get(session_id=session_id)
    assert state.resolved_terms == {"it": "the kettle"} and state.active_documents == []
