"""Sessions are read only by their owner, newest activity first."""

from datetime import timedelta

import pytest
from django.utils import timezone

from sessions_app.exceptions import SessionNotFound
from sessions_app.selectors import session_get, session_list
from tests.factories import ChatSessionFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_sessions_are_listed_newest_activity_first_and_only_for_their_owner():
    owner = UserFactory()
    now = timezone.now()
    quiet = ChatSessionFactory(owner=owner, created_at=now - timedelta(days=3))
    busy = ChatSessionFactory(owner=owner, created_at=now - timedelta(days=5), last_message_at=now)
    new = ChatSessionFactory(owner=owner, created_at=now - timedelta(hours=1))
    ChatSessionFactory()  # someone else's

    assert list(session_list(owner=owner)) == [busy, new, quiet]


def test_sessions_can_be_narrowed_to_one_agent():
    owner = UserFactory()
    mine = ChatSessionFactory(owner=owner, agent_id="support-bot")
    ChatSessionFactory(owner=owner, agent_id="")
    assert list(session_list(owner=owner, agent_id="support-bot")) == [mine]


@pytest.mark.parametrize("session_id", ["not-a-uuid", "00000000-0000-0000-0000-000000000000"])
def test_a_missing_or_malformed_id_is_not_found(session_id):
    with pytest.raises(SessionNotFound):
        session_get(owner=UserFactory(), session_id=session_id)


def test_another_users_session_is_not_found():
    theirs = ChatSessionFactory()
    with pytest.raises(SessionNotFound):
        session_get(owner=UserFactory(), session_id=theirs.id)
    assert session_get(owner=theirs.owner, session_id=str(theirs.id)) == theirs
