"""What the browser journeys share that is not a fixture: where Chromium and the screenshots are, the
test users' password, and opening a page as a person would see it."""

from __future__ import annotations

import shutil

from tests.helpers import ROOT

CHROMIUM = next((p for p in map(shutil.which, ("chromium", "chromium-browser", "google-chrome")) if p), None)
SCREENSHOTS = ROOT / "var" / "screenshots"
PASSWORD = "correct horse battery staple"


def open_page(browser, base: str, *, width: int = 1440, scheme: str = "light", state=None):
    """A new page at ``width`` px in the light or dark theme (``state``: cookies to start with), and the
    list its script errors are collected in."""
    context = browser.new_context(
        viewport={"width": width, "height": 900}, color_scheme=scheme, base_url=base, storage_state=state
    )
    context.set_default_timeout(30_000)
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    return page, errors
