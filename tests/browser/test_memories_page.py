"""The Memories page in a real headless Chromium: memories shown by label and sentence (never a key), added
by hand through its form, updated when added again on the same subject, and read on a phone at 390 px in
both themes and on a desktop (screenshots in var/screenshots/)."""

from __future__ import annotations

import pytest

from foundation.ai import memories
from sessions_app import services
from sessions_app.models import Memory
from tests.browser.support import JOURNEY, SCREENSHOTS, expect, open_page, sign_in
from tests.factories import ArchiveFactory, ChatSessionFactory, MessageFactory, UserFactory

pytestmark = JOURNEY
PHONE = 390
DESKTOP = 1440


def _remembered(user) -> None:
    """A conversation remembered as a commit leaves it (written directly: a commit in this thread would push
    its news from inside the browser's event loop), so that one memory has a conversation."""
    session = ChatSessionFactory(owner=user, title="About me")
    turn = MessageFactory(session=session, role="user", content="Hi! I'm allergic to peanuts and my daughter Mia is 6.")
    archive = ArchiveFactory(session=session)
    for found in memories.extract([("user", turn.content)]):
        memory = Memory.objects.create(
            owner=user, category=found.category, key=found.key, content=found.content, source_archive=archive
        )
        memory.source_messages.add(turn)


def test_memories_are_read_by_label_added_by_hand_and_updated_on_the_same_subject(browser, server):
    user = UserFactory()
    _remembered(user)
    page, errors = open_page(browser, server)
    sign_in(page, user.username, at="/memories/")

    allergy = page.locator(".memory", has_text="Is allergic to peanuts.")
    expect(allergy.locator(".label")).to_have_text("Peanut allergy")
    expect(allergy.get_by_role("link", name="From this conversation")).to_be_visible()
    expect(page.locator(".memory", has_text="Has a daughter, Mia, aged 6.").locator(".label")).to_have_text(
        "Daughter Mia"
    )

    # Nothing written: said at the form, nothing sent.
    page.get_by_role("button", name="Add", exact=True).click()
    expect(page.locator("#add-error")).to_have_text("Write what to remember first.")

    page.get_by_label("Category", exact=True).select_option("preferences")
    page.get_by_label("What to remember").fill("Prefers oat milk in coffee.")
    page.get_by_role("button", name="Add", exact=True).click()
    added = page.locator(".memory", has_text="Prefers oat milk in coffee.")
    expect(added.locator(".label")).to_have_text("Oat milk in coffee")
    expect(added).to_contain_text("Added by hand")
    expect(page.get_by_label("What to remember")).to_have_value("")

    # The same subject again: the memory is updated, its earlier text kept as a correction.
    page.get_by_label("What to remember").fill("Prefers oat milk in coffee, never cow's milk.")
    page.get_by_role("button", name="Add", exact=True).click()
    expect(page.locator(".toast", has_text="Updated")).to_contain_text("the earlier text is in its history")
    updated = page.locator(".memory", has_text="never cow's milk")
    expect(updated).to_have_count(1)
    updated.get_by_text("History: 1 earlier text").click()
    expect(updated.locator(".history")).to_contain_text("corrected by you")
    expect(page.locator(".memory", has_text="Oat milk in coffee")).to_have_count(1)

    # No key is shown as a slug anywhere on the page.
    labels = page.locator(".memory .label").all_inner_texts()
    assert labels and not [text for text in labels if "_" in text], labels
    assert not errors, errors


@pytest.mark.parametrize(("width", "scheme"), [(PHONE, "light"), (PHONE, "dark"), (DESKTOP, "light")])
def test_the_page_fits_a_phone_in_both_themes_and_a_desktop(browser, server, width, scheme):
    user = UserFactory()
    _remembered(user)
    services.memory_create(owner=user, category="preferences", content="Prefers oat milk in coffee.")
    page, errors = open_page(browser, server, width=width, scheme=scheme)
    sign_in(page, user.username, at="/memories/")
    expect(page.locator(".memory")).to_have_count(3)
    expect(page.get_by_label("What to remember")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= width, "nothing overflows sideways"
    form = page.locator("#add-memory").bounding_box()
    assert form["x"] >= 0 and form["x"] + form["width"] <= width
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / f"memories-add-{width}-{scheme}.png"), full_page=True)
    assert not errors, errors
