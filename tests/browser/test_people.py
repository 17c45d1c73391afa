"""People joining, in a real headless Chromium against a real Daphne: an operator invites a person from
the People page, the person opens the link, chooses a username and a password and chats; the spent link
is refused. With SIGN_UP_MODE=approval, a person asks for an account, cannot sign in until an operator
approves it, then can. Screenshots of the pages go to var/screenshots/people-*.png and join-*.png."""

from __future__ import annotations

import re

from tests.browser.support import JOURNEY, PASSWORD, SCREENSHOTS, ask, expect, open_page
from tests.factories import UserFactory, index_document
from tests.samples import KETTLE

pytestmark = JOURNEY
NEW_PASSWORD = "quiet larch 42 meadow"


def _operator(browser, base: str):
    UserFactory(username="olga", is_staff=True, is_superuser=True)
    page, errors = open_page(browser, base)
    page.goto("/admin/login/?next=/admin/ops/")
    page.get_by_label("Username").fill("olga")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    page.get_by_role("link", name="People: invitations and requests").click()
    expect(page).to_have_url(re.compile(r"/admin/ops/people/$"))
    return page, errors


def test_an_operator_invites_a_person_who_joins_and_chats(browser, server):
    operator, operator_errors = _operator(browser, server)
    operator.get_by_label("For", exact=True).fill("Mira, my sister")
    operator.get_by_label("Valid for", exact=True).fill("3")
    operator.get_by_role("button", name="Make an invitation link").click()
    link = operator.get_by_label("Invitation link").input_value()
    assert re.fullmatch(re.escape(server) + r"/join/[\w-]{40,}/", link), link
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    operator.screenshot(path=str(SCREENSHOTS / "people-1440-light.png"), full_page=True)

    # The invited person, in another browser: a weak password is refused, then the account is made.
    mira, errors = open_page(browser, server)
    mira.goto(link)
    expect(mira.get_by_role("heading", name="Join Recollect")).to_be_visible()
    mira.screenshot(path=str(SCREENSHOTS / "join-1440-light.png"))
    mira.get_by_label("Username").fill("mira")
    mira.get_by_label("Password", exact=True).fill("password")
    mira.get_by_label("Password again").fill("password")
    mira.get_by_role("button", name="Make my account").click()
    expect(mira.get_by_role("alert")).to_contain_text("too common")
    mira.get_by_label("Password", exact=True).fill(NEW_PASSWORD)
    mira.get_by_label("Password again").fill(NEW_PASSWORD)
    mira.get_by_role("button", name="Make my account").click()
    expect(mira).to_have_url(re.compile(r"/chat/$"))
    expect(mira.get_by_role("status").first).to_contain_text("Welcome to Recollect, mira.")

    # Mira chats with her own document.
    mira_user = type(UserFactory()).objects.get(username="mira")
    index_document(mira_user, "kettle.md", KETTLE)
    mira.reload()
    answer = ask(mira, "How often should I descale the Aurora kettle?", 0)
    expect(answer.locator(".body")).to_contain_text("every four weeks")
    assert not errors, errors

    # The link is spent; the operator sees who used it.
    stranger, stranger_errors = open_page(browser, server)
    stranger.goto(link)
    expect(stranger.get_by_role("heading", name="This invitation cannot be used")).to_be_visible()
    operator.goto("/admin/ops/people/")
    row = operator.locator("tr", has_text="Mira, my sister")
    expect(row).to_contain_text("used")
    expect(row.get_by_role("link", name="mira")).to_be_visible()
    assert not operator_errors and not stranger_errors, operator_errors + stranger_errors
    for page in (operator, mira, stranger):  # their sockets closed, the server stops at once
        page.context.close()


def test_a_requested_account_signs_in_once_approved(browser, sign_up_server):
    nico, errors = open_page(browser, sign_up_server)
    nico.goto("/accounts/login/")
    nico.get_by_role("link", name="Ask for one").click()
    nico.get_by_label("Username").fill("nico")
    nico.get_by_label("Password", exact=True).fill(NEW_PASSWORD)
    nico.get_by_label("Password again").fill(NEW_PASSWORD)
    nico.get_by_label("Who you are (for the operator)").fill("Nico from the climbing club")
    nico.get_by_role("button", name="Ask for an account").click()
    expect(nico.get_by_role("heading", name="Request sent")).to_be_visible()

    def sign_in_as_nico():
        nico.goto("/accounts/login/")
        nico.get_by_label("Username").fill("nico")
        nico.get_by_label("Password").fill(NEW_PASSWORD)
        nico.get_by_role("button", name="Sign in").click()

    sign_in_as_nico()
    expect(nico.get_by_role("alert")).to_contain_text("did not match")

    operator, operator_errors = _operator(browser, sign_up_server)
    expect(operator.locator("tr", has_text="nico")).to_contain_text("Nico from the climbing club")
    operator.get_by_role("button", name="Approve nico").click()
    expect(operator.locator(".messagelist")).to_contain_text("The account nico is made: they can sign in now.")

    sign_in_as_nico()
    expect(nico).to_have_url(re.compile(r"/chat/$"))
    assert not errors and not operator_errors, errors + operator_errors
    nico.context.close()
    operator.context.close()
