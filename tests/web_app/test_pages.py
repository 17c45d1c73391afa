"""The browser app's pages: behind the sign-in, a conversation's own URL, sign-out from any page,
the account's password, the settings page, and every asset served by the app itself."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from django.contrib.staticfiles import finders

from tests.factories import ChatSessionFactory, MessageFactory, UserFactory
from tests.helpers import ROOT

pytestmark = pytest.mark.django_db

PAGES = ["/chat/", "/documents/", "/memories/", "/account/", "/settings/"]


@pytest.fixture
def browser(client, user):
    client.force_login(user)
    return client


@pytest.mark.parametrize("path", PAGES)
def test_pages_ask_for_a_sign_in(client, path):
    response = client.get(path)
    assert response.status_code == 302 and response["Location"].startswith("/accounts/login/")


@pytest.mark.parametrize("path", PAGES)
def test_every_page_has_the_navigation_and_a_working_sign_out_form(browser, path):
    page = browser.get(path).content.decode()
    assert 'action="/accounts/logout/"' in page and 'method="post"' in page
    for link in ("/chat/", "/documents/", "/memories/", "/account/", "/settings/"):
        assert f'href="{link}"' in page
    assert "csrfmiddlewaretoken" in page and 'name="csrf-token"' in page


def test_pages_cost_a_fixed_number_of_queries(browser, user, django_assert_num_queries):
    for _ in range(5):
        session = ChatSessionFactory(owner=user)
        MessageFactory(session=session)
    # The session and user (2), the documents for the scope list (1), the session checked (1).
    with django_assert_num_queries(4):
        assert browser.get(f"/chat/{session.id}").status_code == 200
    for path in ("/documents/", "/memories/", "/settings/"):
        with django_assert_num_queries(2):
            assert browser.get(path).status_code == 200


def test_a_conversation_has_its_own_url_and_another_users_is_not_found(browser, user):
    mine = ChatSessionFactory(owner=user)
    theirs = ChatSessionFactory(owner=UserFactory())
    page = browser.get(f"/chat/{mine.id}")
    assert page.status_code == 200 and str(mine.id) in page.content.decode()
    missing = browser.get(f"/chat/{theirs.id}")
    assert missing.status_code == 404 and b"No such conversation" in missing.content  # the app's own page
    assert theirs.title.encode() not in missing.content


def test_sign_out_by_get_shows_a_button_and_by_post_signs_out(browser):
    page = browser.get("/accounts/logout/")
    assert page.status_code == 200 and b"Log out of Recollect?" in page.content
    response = browser.post("/accounts/logout/")
    assert response.status_code == 302 and response["Location"] == "/accounts/login/"
    assert browser.get("/chat/").status_code == 302


def test_the_password_can_be_changed(browser, user):
    response = browser.post(
        "/account/password/",
        {
            "old_password": "correct horse battery staple",
            "new_password1": "a new and longer passphrase",
            "new_password2": "a new and longer passphrase",
        },
    )
    assert response.status_code == 302 and response["Location"] == "/account/"
    user.refresh_from_db()
    assert user.check_password("a new and longer passphrase")


def test_the_settings_page_says_which_models_answer_and_which_flags_are_on(browser, settings):
    settings.ENABLE_QUERY_REWRITING = False
    page = browser.get("/settings/").content.decode()
    assert "Built-in extractive engine" in page and "all-MiniLM-L6-v2" in page
    assert re.search(r"ENABLE_QUERY_REWRITING</td><td><span class=\"badge failed\">off", page)
    assert "Reached at" not in page  # staff only


def test_every_script_and_stylesheet_is_served_by_the_app():
    for template in (ROOT / "templates").rglob("*.html"):
        text = template.read_text()
        assert not re.search(r"<(script|link)[^>]+(src|href)=\"(https?:)?//", text), template
    for name in ("marked.umd.js", "purify.min.js", "README.md"):
        assert finders.find(f"recollect/vendor/{name}"), name
    for name in ("app.css", "common.js", "chat.js", "documents.js", "memories.js"):
        assert finders.find(f"recollect/app/{name}"), name
    notes = Path(finders.find("recollect/vendor/README.md")).read_text()
    assert "18.2.1" in notes and "3.4.18" in notes and "MIT" in notes


def test_answers_are_sanitised_before_they_reach_the_page():
    common = Path(finders.find("recollect/app/common.js")).read_text()
    assert "DOMPurify.sanitize(marked.parse(" in common
    # Every other insertion of text into a page goes through textContent, never innerHTML.
    for name in ("chat.js", "documents.js", "memories.js"):
        assert "innerHTML" not in Path(finders.find(f"recollect/app/{name}")).read_text(), name
