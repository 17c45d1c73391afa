"""A long conversation opens in a real Chromium on its latest turns, pages back to its very first one on
demand, and a link to an early turn pages back until that turn is shown."""

from __future__ import annotations

from sessions_app.api.paging import PAGE_DEFAULT_SIZE
from sessions_app.models import Message
from tests.browser.support import JOURNEY, expect, open_page, sign_in
from tests.factories import ChatSessionFactory, UserFactory

pytestmark = JOURNEY

TURNS = 600


def _long_conversation(user):
    session = ChatSessionFactory(owner=user, title="A long conversation")
    Message.objects.bulk_create(
        Message(
            session=session,
            owner=user,
            seq=n,
            role="user" if n % 2 else "assistant",
            content=f"Turn {n} of the long conversation.",
        )
        for n in range(1, TURNS + 1)
    )
    return session


def test_a_long_conversation_opens_on_its_latest_turns_and_pages_back_to_the_first(browser, server):
    user = UserFactory()
    session = _long_conversation(user)
    page, errors = open_page(browser, server)
    sign_in(page, user.username, at=f"/chat/{session.id}")

    turns = page.locator("#log .msg")
    expect(page.get_by_text(f"Turn {TURNS} of the long conversation.")).to_be_visible()
    expect(turns).to_have_count(PAGE_DEFAULT_SIZE)
    earlier = page.get_by_role("button", name="Show earlier messages")
    while earlier.count():
        shown = turns.count()
        earlier.click()
        expect(turns).not_to_have_count(shown)
    expect(turns).to_have_count(TURNS)
    texts = turns.locator(".body").all_inner_texts()
    assert texts[0].startswith("Turn 1 of") and texts[-1].startswith(f"Turn {TURNS} of")
    assert [int(text.split()[1]) for text in texts] == list(range(1, TURNS + 1))
    assert not errors


def test_a_link_to_an_early_turn_pages_back_until_it_is_shown(browser, server):
    user = UserFactory()
    session = _long_conversation(user)
    first = Message.objects.get(session=session, seq=1)
    page, errors = open_page(browser, server)
    sign_in(page, user.username, at="/chat/")
    page.goto(f"/chat/{session.id}#m-{first.id}")
    expect(page.locator(f"#m-{first.id}")).to_be_in_viewport()
    expect(page.locator(f"#m-{first.id}")).to_have_class("msg user highlight")
    assert not errors


def test_following_a_link_to_an_early_turn_from_the_open_conversation_pages_back(browser, server):
    user = UserFactory()
    session = _long_conversation(user)
    early = Message.objects.get(session=session, seq=3)
    page, errors = open_page(browser, server)
    sign_in(page, user.username, at=f"/chat/{session.id}")
    expect(page.locator("#log .msg")).to_have_count(PAGE_DEFAULT_SIZE)
    page.evaluate(f"location.hash = '#m-{early.id}'")
    expect(page.locator(f"#m-{early.id}")).to_be_in_viewport()
    assert not errors
