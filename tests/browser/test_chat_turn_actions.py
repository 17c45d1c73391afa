"""Edit and Regenerate in a real Chromium belong to the conversation's last exchange only: paging back to
earlier turns never moves them, an exchange already remembered offers neither, and Escape takes an edit
back."""

from __future__ import annotations

from sessions_app.api.paging import PAGE_DEFAULT_SIZE
from sessions_app.models import Message
from tests.browser.support import JOURNEY, ask, expect, open_page, sign_in
from tests.factories import ArchiveFactory, ChatSessionFactory, UserFactory

pytestmark = JOURNEY

# One page more than a conversation opens on, so that earlier turns are paged back to.
TURNS = PAGE_DEFAULT_SIZE + 10
EDIT = "Edit and send the last question again"
REGENERATE = "Ask the last question again"


def _conversation(user):
    """Questions on odd turns, answers on even ones: the last question is turn TURNS - 1."""
    session = ChatSessionFactory(owner=user, title="Turns")
    Message.objects.bulk_create(
        Message(session=session, owner=user, seq=n, role="user" if n % 2 else "assistant", content=f"Turn {n}.")
        for n in range(1, TURNS + 1)
    )
    return session


def _turn(session, seq: int) -> str:
    return f"#m-{Message.objects.get(session=session, seq=seq).id}"


def _page_back_to_the_first_turn(page):
    page.get_by_role("button", name="Show earlier messages").click()
    expect(page.locator("#log .msg")).to_have_count(TURNS)
    expect(page.get_by_role("button", name="Show earlier messages")).to_have_count(0)


def test_paging_back_leaves_edit_and_regenerate_on_the_last_exchange_and_escape_takes_an_edit_back(browser, server):
    user = UserFactory()
    session = _conversation(user)
    page, errors = open_page(browser, server)
    sign_in(page, user.username, at=f"/chat/{session.id}")
    last_question, last_answer = page.locator(_turn(session, TURNS - 1)), page.locator(_turn(session, TURNS))
    expect(page.locator("#log .msg")).to_have_count(PAGE_DEFAULT_SIZE)

    _page_back_to_the_first_turn(page)
    # The earlier turns went above: the last exchange is still the one offered for Edit and Regenerate.
    expect(page.get_by_role("button", name=EDIT)).to_have_count(1)
    expect(last_question.get_by_role("button", name=EDIT)).to_be_visible()
    expect(page.get_by_role("button", name=REGENERATE)).to_have_count(1)
    expect(last_answer.get_by_role("button", name=REGENERATE)).to_be_visible()

    composer = page.get_by_label("Message", exact=True)
    last_question.get_by_role("button", name=EDIT).click()
    expect(composer).to_have_value(f"Turn {TURNS - 1}.")
    expect(page.locator("#editing")).to_be_visible()
    composer.press("Escape")
    expect(composer).to_have_value("")
    expect(page.locator("#editing")).to_be_hidden()
    expect(last_question.get_by_role("button", name=EDIT)).to_be_visible()
    assert not errors, errors


def test_a_remembered_last_exchange_offers_neither_edit_nor_regenerate_until_a_new_question(browser, server):
    user = UserFactory()
    session = _conversation(user)
    archive = ArchiveFactory(session=session, index=1, first_seq=1, last_seq=TURNS, message_count=TURNS)
    Message.objects.filter(session=session).update(archive=archive)
    page, errors = open_page(browser, server)
    sign_in(page, user.username, at=f"/chat/{session.id}")
    expect(page.locator("#archives")).to_contain_text("Remembered so far: 1 archive")
    expect(page.locator("#log .msg")).to_have_count(PAGE_DEFAULT_SIZE)
    expect(page.get_by_role("button", name=EDIT)).to_have_count(0)
    expect(page.get_by_role("button", name=REGENERATE)).to_have_count(0)

    _page_back_to_the_first_turn(page)
    expect(page.get_by_role("button", name=EDIT)).to_have_count(0)
    expect(page.get_by_role("button", name=REGENERATE)).to_have_count(0)

    # A new question is not remembered yet: its exchange can be edited and asked again.
    answer = ask(page, "What did we say?", 0)
    expect(page.get_by_role("button", name=EDIT)).to_have_count(1)
    expect(page.locator(".msg.user").last.get_by_role("button", name=EDIT)).to_be_visible()
    expect(page.get_by_role("button", name=REGENERATE)).to_have_count(1)
    expect(answer.get_by_role("button", name=REGENERATE)).to_be_visible()
    assert not errors, errors
