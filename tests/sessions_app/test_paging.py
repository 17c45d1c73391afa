"""A long conversation comes in bounded pages: the session's answer holds its latest turns and a cursor,
and the cursors read every message exactly once, in order, however long the conversation."""

import json

import pytest

from sessions_app.api.paging import PAGE_DEFAULT_SIZE, PAGE_MAX_SIZE
from sessions_app.models import Message
from sessions_app.selectors import PAGE_MAX_BYTES
from tests.factories import ArchiveFactory, ChatSessionFactory, MessageFactory

pytestmark = pytest.mark.django_db

LONG_SESSION = 3000
TURN_CHARS = 10_000


@pytest.fixture
def long_session(user):
    session = ChatSessionFactory(owner=user)
    filler = "The kettle descaling schedule, again. " * (TURN_CHARS // 38)
    Message.objects.bulk_create(
        Message(session=session, owner=user, seq=n, role="user", content=f"turn {n}: {filler}")
        for n in range(1, LONG_SESSION + 1)
    )
    return session


def _seqs(rows):
    return [row["seq"] for row in rows]


def test_a_long_session_answers_its_latest_turns_and_a_cursor_to_the_rest(auth_client, long_session):
    response = auth_client.get(f"/api/sessions/{long_session.id}")
    assert response.status_code == 200
    assert len(response.content) < 2 * PAGE_MAX_BYTES  # 3,000 turns of 10 KB were one 31 MB answer
    body = response.json()
    assert _seqs(body["messages"]) == list(range(LONG_SESSION - PAGE_DEFAULT_SIZE + 1, LONG_SESSION + 1))
    assert body["messages_count"] == LONG_SESSION
    assert body["messages_previous"] and body["messages_next"] is None


def test_reading_back_from_the_session_reaches_every_message_once_in_order(auth_client, long_session):
    body = auth_client.get(f"/api/sessions/{long_session.id}").json()
    seen, cursor, pages = _seqs(body["messages"]), body["messages_previous"], 1
    while cursor:
        page = auth_client.get(
            f"/api/sessions/{long_session.id}/messages", {"cursor": cursor, "limit": PAGE_MAX_SIZE}
        ).json()
        assert len(json.dumps(page)) < 2 * PAGE_MAX_BYTES
        seen = _seqs(page["results"]) + seen
        cursor, pages = page["previous"], pages + 1
    assert seen == list(range(1, LONG_SESSION + 1))
    assert pages > LONG_SESSION // PAGE_MAX_SIZE  # bounded by bytes as well as by count


def test_reading_on_from_the_first_page_reaches_every_message_once_in_order(auth_client, long_session):
    seen, page = [], auth_client.get(f"/api/sessions/{long_session.id}/messages", {"limit": PAGE_MAX_SIZE}).json()
    assert page["previous"] is None and page["count"] == LONG_SESSION
    while True:
        seen += _seqs(page["results"])
        if not page["next"]:
            break
        page = auth_client.get(f"/api/sessions/{long_session.id}/messages", {"cursor": page["next"]}).json()
    assert seen == list(range(1, LONG_SESSION + 1))


def test_a_page_of_short_turns_holds_the_asked_number_with_cursors_both_ways(auth_client, user):
    session = ChatSessionFactory(owner=user)
    for n in range(1, 8):
        MessageFactory(session=session, seq=n, content=f"short turn {n}")
    first = auth_client.get(f"/api/sessions/{session.id}/messages", {"limit": 3}).json()
    assert _seqs(first["results"]) == [1, 2, 3] and first["previous"] is None
    second = auth_client.get(f"/api/sessions/{session.id}/messages", {"cursor": first["next"], "limit": 3}).json()
    assert _seqs(second["results"]) == [4, 5, 6]
    back = auth_client.get(f"/api/sessions/{session.id}/messages", {"cursor": second["previous"], "limit": 3}).json()
    assert _seqs(back["results"]) == [1, 2, 3] and back["previous"] is None and back["next"]
    last = auth_client.get(f"/api/sessions/{session.id}/messages", {"cursor": second["next"], "limit": 3}).json()
    assert _seqs(last["results"]) == [7] and last["next"] is None


def test_messages_recorded_while_paging_are_reached_by_the_next_cursor(auth_client, user):
    session = ChatSessionFactory(owner=user)
    MessageFactory(session=session, seq=1, content="first")
    page = auth_client.get(f"/api/sessions/{session.id}/messages").json()
    assert page["next"] is None
    MessageFactory(session=session, seq=2, content="second")
    detail = auth_client.get(f"/api/sessions/{session.id}").json()
    assert _seqs(detail["messages"]) == [1, 2] and detail["messages_previous"] is None


def test_an_empty_session_has_no_pages(auth_client, user):
    session = ChatSessionFactory(owner=user)
    body = auth_client.get(f"/api/sessions/{session.id}").json()
    assert body["messages"] == [] and body["messages_previous"] is None and body["messages_count"] == 0
    page = auth_client.get(f"/api/sessions/{session.id}/messages").json()
    assert page == {"count": 0, "previous": None, "next": None, "results": []}


def test_archives_are_paged_like_messages(auth_client, user):
    session = ChatSessionFactory(owner=user)
    for index in range(1, 6):
        ArchiveFactory(session=session, index=index, first_seq=index, last_seq=index)
    first = auth_client.get(f"/api/sessions/{session.id}/archives", {"limit": 2}).json()
    assert [a["index"] for a in first["results"]] == [1, 2] and first["count"] == 5
    rest = auth_client.get(f"/api/sessions/{session.id}/archives", {"cursor": first["next"], "limit": 10}).json()
    assert [a["index"] for a in rest["results"]] == [3, 4, 5] and rest["next"] is None
    assert [a["index"] for a in auth_client.get(f"/api/sessions/{session.id}").json()["archives"]] == [1, 2, 3, 4, 5]


@pytest.mark.parametrize(
    "query",
    [{"cursor": "not a cursor"}, {"cursor": "c2lkZXdheXM6Mw"}, {"limit": 0}, {"limit": PAGE_MAX_SIZE + 1}],
)
def test_a_wrong_cursor_or_page_size_is_a_clear_400(auth_client, user, query):
    session = ChatSessionFactory(owner=user)
    response = auth_client.get(f"/api/sessions/{session.id}/messages", query)
    assert response.status_code == 400
    assert response.json()["error"]["code"]


def test_the_schema_documents_the_pages_and_their_sizes(auth_client):
    schema = auth_client.get("/api/schema/", HTTP_ACCEPT="application/json").json()
    description = schema["info"]["description"]
    assert f"{PAGE_DEFAULT_SIZE} a page by default and at most {PAGE_MAX_SIZE}" in description
    assert f"{PAGE_MAX_BYTES // (1024 * 1024)} MB" in description
    page = schema["paths"]["/api/sessions/{session_id}/messages"]["get"]
    assert {p["name"] for p in page["parameters"]} >= {"cursor", "limit"}
    assert "400" in page["responses"] and "404" in page["responses"]
    detail = schema["components"]["schemas"]["SessionDetail"]["properties"]
    assert {"messages_previous", "messages_next", "messages_count", "archives_previous"} <= set(detail)


def test_the_context_for_search_holds_the_latest_turns_within_a_page_of_bytes(auth_client, user):
    session = ChatSessionFactory(owner=user)
    Message.objects.bulk_create(
        Message(session=session, owner=user, seq=n, role="user", content=f"turn {n} " + "y" * 100_000)
        for n in range(1, 41)
    )
    response = auth_client.get(f"/api/sessions/{session.id}/context", {"max_messages": 1000})
    assert response.status_code == 200 and len(response.content) < 2 * PAGE_MAX_BYTES  # was 4 MB for 40 turns
    turns = [m["seq"] for m in response.json()["recent_messages"]]
    assert turns == list(range(41 - len(turns), 41)) and len(turns) == PAGE_MAX_BYTES // 100_009 + 1
    short = ChatSessionFactory(owner=user)
    for n in range(1, 6):
        MessageFactory(session=short, seq=n, content=f"short {n}")
    recent = auth_client.get(f"/api/sessions/{short.id}/context", {"max_messages": 3}).json()["recent_messages"]
    assert [m["seq"] for m in recent] == [3, 4, 5]
