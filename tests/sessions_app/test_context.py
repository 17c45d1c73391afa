"""The session context handed to search is {summary, summaries, recent_messages}, and the
consumer prefers summary, else joins summaries, else nothing."""

import pytest

from sessions_app import services
from sessions_app.selectors import SUMMARY_SEPARATOR, session_summary_text
from tests.factories import ChatSessionFactory

pytestmark = pytest.mark.django_db


def _turns(session, pairs):
    services.message_bulk_create(session=session, messages=[services.NewMessage(role=r, content=c) for r, c in pairs])


@pytest.fixture
def committed_session(django_capture_on_commit_callbacks):
    session = ChatSessionFactory()
    with django_capture_on_commit_callbacks(execute=True):
        _turns(
            session,
            [
                ("user", "The staging database runs out of disk every Sunday."),
                ("assistant", "Rotate the WAL archive and add a 7 day retention."),
            ],
        )
        services.session_commit(session=session)
        _turns(
            session,
            [
                ("user", "Our invoices need the new VAT rate of 21 percent."),
                ("assistant", "Update the tax table and regenerate the March invoices."),
            ],
        )
        services.session_commit(session=session)
        _turns(session, [("user", "And what about the April ones?")])
    return session


def test_the_context_has_the_contract_keys():
    context = services.session_search_context(session=ChatSessionFactory(), query="anything").as_dict()
    assert set(context) == {"summary", "summaries", "recent_messages"}
    assert context == {"summary": "", "summaries": [], "recent_messages": []}


def test_after_a_commit_the_summary_is_non_empty_and_ranked_by_the_query(committed_session):
    context = services.session_search_context(
        session=committed_session, query="invoice VAT rate", max_archives=2
    ).as_dict()
    assert len(context["summaries"]) == 2
    assert "VAT" in context["summaries"][0], "the archive about invoices ranks first for an invoice query"
    assert context["summary"] == SUMMARY_SEPARATOR.join(context["summaries"])
    assert "\n\n---\n\n" in context["summary"]
    assert [m["content"] for m in context["recent_messages"]] == ["And what about the April ones?"]


def test_max_archives_and_max_messages_bound_the_context(committed_session):
    context = services.session_search_context(
        session=committed_session, query="disk", max_archives=1, max_messages=0
    ).as_dict()
    assert len(context["summaries"]) == 1 and "disk" in context["summaries"][0].lower()
    assert context["recent_messages"] == []


def test_without_a_query_the_newest_archives_come_first(committed_session):
    context = services.session_search_context(session=committed_session, max_archives=1).as_dict()
    assert "VAT" in context["summary"]


def test_keyword_ranking_serves_when_archives_have_no_vectors_yet(django_capture_on_commit_callbacks):
    session = ChatSessionFactory()
    _turns(session, [("user", "The staging database runs out of disk every Sunday.")])
    services.session_commit(session=session)  # embeddings never enqueued: no worker ran
    _turns(session, [("user", "Invoices need the new VAT rate.")])
    services.session_commit(session=session)
    context = services.session_search_context(session=session, query="disk space", max_archives=2).as_dict()
    assert "disk" in context["summaries"][0].lower()


def test_the_api_serves_the_context(auth_client, user, committed_session):
    committed_session.owner = user
    committed_session.save()
    body = auth_client.get(
        f"/api/sessions/{committed_session.id}/context", {"query": "VAT", "max_archives": 1, "max_messages": 5}
    ).json()
    assert set(body) == {"summary", "summaries", "recent_messages"} and "VAT" in body["summary"]
    assert auth_client.get(f"/api/sessions/{committed_session.id}/context", {"max_archives": -1}).status_code == 400


def test_the_consumer_prefers_summary():
    assert session_summary_text({"summary": "S", "summaries": ["a", "b"]}) == "S"


def test_the_consumer_falls_back_to_joining_summaries_alone():
    assert session_summary_text({"summaries": ["first", "second"]}) == f"first{SUMMARY_SEPARATOR}second"
    assert session_summary_text({"summary": "  ", "summaries": ["only"]}) == "only"


def test_the_consumer_defaults_to_nothing():
    assert session_summary_text({}) == ""
    assert session_summary_text(None) == ""
    assert session_summary_text({"recent_messages": []}) == ""
