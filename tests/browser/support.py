"""What the browser journeys share that is not a fixture: where Chromium and the screenshots are, the
test users' password, opening a page as a person would see it, signing in and asking in the chat."""

from __future__ import annotations

import re
import shutil

import pytest

from tests.helpers import ROOT

try:
    from playwright.sync_api import expect
except ImportError:  # the journeys skip, saying Playwright is missing, before any of this is used
    expect = None

CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
# Every journey's marks (``pytestmark = JOURNEY``): slow, on real Daphne servers sharing the test database,
# and skipped, saying what is missing, on a machine without Playwright or Chromium.
JOURNEY = [
    pytest.mark.slow,
    pytest.mark.django_db(transaction=True),
    pytest.mark.skipif(expect is None, reason="Playwright for Python is not installed"),
    pytest.mark.skipif(CHROMIUM is None, reason="no Chromium on this machine (apt-get install chromium)"),
]
SCREENSHOTS = ROOT / "var" / "screenshots"
PASSWORD = "correct horse battery staple"
# How Chromium words a refusal by the page's policy in the console.
CSP_REFUSAL = "Content Security Policy"
SANITISER = "/static/recollect/vendor/purify.min.js"


def open_page(browser, base: str, *, width: int = 1440, scheme: str = "light", state=None):
    """A new page at ``width`` px in the light or dark theme (``state``: cookies to start with), and the
    list its script errors and Content-Security-Policy refusals (its own and those of pages opened in its
    context) are collected in."""
    context = browser.new_context(
        viewport={"width": width, "height": 900}, color_scheme=scheme, base_url=base, storage_state=state
    )
    context.set_default_timeout(30_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    # Chromium reports whatever the Content-Security-Policy refused (a script, a handler, a style) as a
    # console error; every page a journey visits must need nothing the policy refuses.
    context.on("console", lambda message: _note_policy_violation(message, errors))
    return page, errors


def _note_policy_violation(message, errors: list[str]) -> None:
    if message.type != "error" or CSP_REFUSAL not in message.text:
        return
    # The sanitiser parses untrusted markup (a message with an <img onerror>) in an inert document that
    # inherits the page's policy, and Chromium reports the handlers it finds there as refused, though
    # nothing there could run: that is the sanitiser at work, not the page needing what the policy refuses.
    if message.location.get("url", "").endswith(SANITISER) and "inline event handler" in message.text:
        return
    errors.append(f"{message.page.url if message.page else '?'}: {message.text}")


def sign_in(page, username: str, *, at: str = "/chat/") -> None:
    """Signs in from the page ``at``, which sends a signed-out person to the sign-in form and back."""
    page.goto(at)
    expect(page).to_have_url(re.compile(r"/accounts/login/"))
    page.get_by_label("Username").fill(username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Sign in").click()
    expect(page).to_have_url(re.compile(re.escape(at) + "$"))


def ask(page, text: str, answers_before: int):
    """Types ``text`` in the chat, sends it with Enter and waits for the whole answer (its mood comes just
    before the end); returns the answer."""
    page.get_by_label("Message", exact=True).fill(text)
    page.keyboard.press("Enter")
    expect(page.locator(".msg.assistant .mood")).to_have_count(answers_before + 1, timeout=60_000)
    return page.locator(".msg.assistant").last
