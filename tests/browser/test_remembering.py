"""The "remembers what matters" walk, in a real headless Chromium against a real Daphne, with no language
model configured: a new person says what matters about themselves and finds it again when it matters,
is told plainly when nothing relevant is known, reads a kettle manual's steps, fix and warranty, finds
the conversation where they talked about descaling, names a printed PDF and sees their memories as
sentences they can add to, correct and forget.

Screenshots of the key pages at 390 px and 1440 px, light and dark, go to var/screenshots/remembering-*.png
(the path is printed); each is checked for what a person would notice first: nothing wider than the
screen, and the notice never over the message box.
"""

from __future__ import annotations

import re

from rest_framework.authtoken.models import Token

from tests.browser.support import JOURNEY, SCREENSHOTS, ask, expect, open_page, sign_in
from tests.documents_app import files
from tests.factories import UserFactory

pytestmark = JOURNEY
PHONE, DESKTOP = 390, 1440
INDEXED_S = 90_000  # how long a document may take to be ready, in ms

MANUAL = """# Aurora K3 Kettle Manual

Thank you for choosing the **Aurora K3**, a 1.7 litre cordless kettle.

## 1. Safety

- Never immerse the base in water.
- **Do not** fill the kettle above the MAX mark.

## 2. Descaling

Limescale builds up in hard water and slows boiling. To descale:

1. Fill the kettle to the MAX mark with equal parts water and white vinegar.
2. Boil it once and leave it to stand for an hour.
3. Empty it and rinse three times with clean water.

## 3. Error codes

Error E1 means the kettle boiled dry. Let it cool for ten minutes before refilling.
Error E3 means the base is not detected. Lift the kettle and seat it firmly on the base again.

## 4. Cleaning

Wipe the outside with a damp cloth. Do not use abrasive cleaners on the body.

## 7. Warranty

The Aurora K3 comes with a two-year guarantee from the date of purchase.
Keep your receipt as proof of purchase.
The guarantee does not cover limescale damage.
"""
STEPS = [
    "Fill the kettle to the MAX mark with equal parts water and white vinegar.",
    "Boil it once and leave it to stand for an hour.",
    "Empty it and rinse three times with clean water.",
]
BIKE = """# Bike care notes

## Chain

Clean the bike chain every month with a degreaser and a brush. Oil each link lightly and wipe off the excess.

## Tyres

Check the tyre pressure every week. Road tyres need 80 to 100 psi.
"""
NOTHING_ABOUT_MONGOLIA = (
    "I found nothing about the capital of Mongolia in your documents, memories or earlier conversations."
)


def _upload(page, tmp_path, documents: dict[str, str | bytes]) -> None:
    """Uploads the files on the documents page and waits until each is ready (``documents``: file name ->
    content; each is listed by the title it is expected to get)."""
    page.get_by_role("navigation").get_by_role("link", name="Documents").click()
    paths = []
    for name, content in documents.items():
        path = tmp_path / name
        path.write_bytes(content if isinstance(content, bytes) else content.encode())
        paths.append(str(path))
    page.locator("#files").set_input_files(paths)
    expect(page.locator("#documents li .badge", has_text="ready")).to_have_count(len(documents), timeout=INDEXED_S)


def _new_chat(page) -> None:
    page.get_by_role("navigation").get_by_role("link", name="Chat").click()
    expect(page.locator("#conv-title")).to_have_text("New conversation")
    expect(page.locator("#socket-state")).to_have_text("")


def _sources(answer) -> list[str]:
    """The source chips under an answer, as a person reads them ("1 · 2. Descaling")."""
    return answer.locator(".source-chip").all_inner_texts()


def _screenshots(browser, base: str, state, pages: dict[str, str]) -> None:
    """Each page (name -> path) at 390 and 1440 px, light and dark, opened afresh with ``state``'s cookies
    and storage; checked for what a person notices first before it is saved."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for scheme in ("light", "dark"):
        for width in (PHONE, DESKTOP):
            page, errors = open_page(browser, base, width=width, scheme=scheme, state=state)
            for name, path in pages.items():
                page.goto(path)
                page.wait_for_load_state("networkidle")
                chat = "/chat/" in path
                if chat:
                    expect(page.locator(".msg.assistant .mood").last).to_be_visible()
                _check_layout(page, width)
                # The chat fits the window and scrolls within it; the other pages are read whole.
                shot = SCREENSHOTS / f"remembering-{name}-{width}-{scheme}.png"
                page.screenshot(path=str(shot), full_page=not chat)
                if chat and page.locator("a.cite").count():
                    page.locator("a.cite").first.click()  # the first source, opened beside the answer
                    expect(page.locator("#panel-body")).not_to_be_empty()
                    _check_layout(page, width)
                    page.screenshot(path=str(shot.with_name(f"remembering-{name}-source-{width}-{scheme}.png")))
            assert not errors, errors
            page.context.close()
    print(f"\nscreenshots in {SCREENSHOTS}/remembering-*.png")


def _check_layout(page, width: int) -> None:
    assert page.evaluate("document.documentElement.scrollWidth") <= width, f"{page.url} overflows sideways"
    notice, composer = page.locator("#model-notice"), page.locator("#message")
    if notice.count() and notice.is_visible() and composer.is_visible():
        above, box = notice.bounding_box(), composer.bounding_box()
        assert above["y"] + above["height"] <= box["y"], "the notice covers the message box"


# --- 1, 2 and 6: what matters about the person ----------------------------------------------------------


def _say_what_matters(page) -> str:
    """Step 1: the allergy is said twice and acknowledged each time with what was remembered, then the
    conversation is remembered (asked in words, then with its button) and keeps it. Returns the
    conversation's address."""
    said = ask(page, "Hi! I'm allergic to peanuts.", 0)
    expect(said.locator(".body")).to_contain_text("Noted: you are allergic to peanuts. I'll keep that in mind.")
    expect(said.locator(".remembered")).to_contain_text("Is allergic to peanuts.")
    expect(said.locator(".mood")).to_have_text("Confident")
    stronger = ask(page, "Please remember: I have a severe peanut allergy.", 1)
    expect(stronger.locator(".body")).to_have_text(
        "Noted: you are severely allergic to peanuts (before: you are allergic to peanuts). I'll keep that in mind."
    )
    expect(stronger.locator(".remembered")).to_contain_text("Is severely allergic to peanuts.")
    assert _sources(said) == [] and _sources(stronger) == [], "nothing is quoted at someone telling"

    # Asked in words, the chat says how the conversation is remembered; the button does it.
    typed = ask(page, "Remember this conversation", 2)
    expect(typed.locator(".body")).to_contain_text("press “Remember this conversation” at the top of the chat")
    page.get_by_role("button", name="Remember this conversation").click()
    learned = page.locator(".learned").last
    expect(learned).to_contain_text("Remembered.")
    expect(learned).to_contain_text("Already remembered (1)")
    expect(learned).to_contain_text("Peanut allergy: Is severely allergic to peanuts.")
    expect(learned).not_to_contain_text("peanut_allergy")
    return page.url


def _ask_what_to_avoid_and_the_unknown(page) -> str:
    """Steps 1 and 2: a new chat brings the allergy up when it matters, and an off-topic question is
    told that nothing relevant was found. Returns the conversation's address."""
    _new_chat(page)
    avoid = ask(page, "What should I avoid eating?", 0)
    expect(avoid.locator(".body")).to_contain_text("Is severely allergic to peanuts.")
    assert _sources(avoid) == ["1 · Peanut allergy"], _sources(avoid)
    body = avoid.locator(".body").inner_text().lower()
    assert "kettle" not in body and "chain" not in body, body
    expect(avoid.locator(".mood")).to_have_text("Confident")
    avoid.locator("a.cite").first.click()
    panel = page.locator("#panel")
    expect(panel).to_contain_text("Peanut allergy")
    expect(panel).to_contain_text("Is severely allergic to peanuts.")
    expect(panel.get_by_role("link", name="Open the conversation it came from, at that turn")).to_be_visible()
    page.get_by_role("button", name="Close the source").click()

    unknown = ask(page, "What is the capital of Mongolia?", 1)
    expect(unknown.locator(".body")).to_have_text(NOTHING_ABOUT_MONGOLIA)
    expect(unknown.locator("a.cite")).to_have_count(0)
    assert _sources(unknown) == []
    expect(unknown.locator(".mood")).to_have_text("Uncertain")
    expect(unknown.locator(".mood")).to_have_attribute("title", re.compile("Nothing relevant was found"))
    return page.url


def _model_notice_says_how_once(page) -> None:
    """Step 2: the notice links to the settings page's how-to (Ollama, any OpenAI-compatible server), and
    once dismissed stays so."""
    notice = page.locator("#model-notice")
    expect(notice).to_be_visible()
    expect(notice).to_contain_text("No language model is configured")
    notice.get_by_role("link", name="Set one up").click()
    expect(page).to_have_url(re.compile(r"/settings/#language-model$"))
    howto = page.locator("#language-model")
    expect(howto).to_contain_text("A local model, through Ollama")
    expect(howto).to_contain_text("LLM_MODEL=ollama/llama3.1")
    expect(howto).to_contain_text("Any OpenAI-compatible server")
    page.go_back()
    page.get_by_role("button", name="Dismiss this notice").click()
    expect(notice).to_be_hidden()
    page.reload()
    expect(page.locator(".msg.assistant")).to_have_count(2)
    expect(notice).to_be_hidden()


def _memories_read_by_label_and_one_added_by_hand(page) -> None:
    """Step 6: the memories read as sentences under readable labels, and one is added by hand and corrected
    on the Memories page."""
    page.get_by_role("navigation").get_by_role("link", name="Memories").click()
    expect(page.get_by_text("noted as you said it in a chat")).to_be_visible()
    allergy = page.locator(".memory", has_text="Is severely allergic to peanuts.")
    expect(allergy.locator(".label")).to_have_text("Peanut allergy")
    expect(allergy.get_by_role("link", name="From this conversation")).to_be_visible()
    expect(allergy.get_by_text("History: 1 earlier text")).to_be_visible()

    page.get_by_label("Category", exact=True).select_option("preferences")
    page.get_by_label("What to remember").fill("Prefers oat milk in coffee.")
    page.get_by_role("button", name="Add", exact=True).click()
    added = page.locator(".memory", has=page.locator(".label", has_text="Oat milk in coffee"))
    expect(added.locator(".content")).to_have_text("Prefers oat milk in coffee.")
    expect(added).to_contain_text("Added by hand")

    added.get_by_role("button", name="Edit Oat milk in coffee").click()
    page.get_by_label("New text of Oat milk in coffee").fill("Prefers oat milk in coffee, never cow's milk.")
    added.get_by_role("button", name="Save").click()
    corrected = page.locator(".memory", has_text="never cow's milk")
    expect(corrected.locator(".label")).to_have_text("Oat milk in coffee")
    page.reload()
    expect(corrected).to_have_count(1)
    labels = page.locator(".memory .label").all_inner_texts()
    assert labels and not [label for label in labels if "_" in label], labels


def _a_memory_is_forgotten(page) -> None:
    """Step 6: the hand-added memory is deleted, and stays so; the allergy stays."""
    page.locator(".memory", has_text="never cow's milk").get_by_role("button", name="Delete Oat milk in coffee").click()
    page.get_by_role("button", name="Forget").click()
    expect(page.locator(".memory", has_text="oat milk")).to_have_count(0)
    page.reload()
    expect(page.locator(".memory", has_text="Is severely allergic to peanuts.")).to_have_count(1)
    expect(page.locator(".memory", has_text="oat milk")).to_have_count(0)


def test_what_matters_is_kept_and_found_when_it_matters_and_nothing_found_is_said(browser, server, tmp_path):
    user = UserFactory()
    page, errors = open_page(browser, server)
    sign_in(page, user.username)
    _upload(page, tmp_path, {"kettle_manual.md": MANUAL, "bike_care.md": BIKE})
    _new_chat(page)
    told = _say_what_matters(page)
    before_dismissing = page.context.storage_state()  # the notice still shows, as it does to a new visitor
    asked = _ask_what_to_avoid_and_the_unknown(page)
    _screenshots(browser, server, before_dismissing, {"acknowledged": told, "nothing-found": asked})
    _model_notice_says_how_once(page)
    _memories_read_by_label_and_one_added_by_hand(page)
    _screenshots(browser, server, page.context.storage_state(), {"memories": "/memories/"})
    _a_memory_is_forgotten(page)
    assert not errors, errors


# --- 3, 5 and 7: a kettle manual ------------------------------------------------------------------------


def _manual_reads_as_a_person_would_name_it(page) -> None:
    """Step 3: the manual's abstract is a sentence about it, not an instruction nor markup, and its short
    last section, the warranty, is a node of its own."""
    row = page.locator("#documents li", has_text="Aurora K3 Kettle Manual")
    row.get_by_role("button", name=re.compile("^Browse")).click()
    node = page.locator("#node")
    expect(node).to_contain_text("L0 · abstract")
    abstract = node.locator(".tier p").first
    expect(abstract).to_have_text(
        "Aurora K3 Kettle Manual: Thank you for choosing the Aurora K3, a 1.7 litre cordless kettle."
    )
    assert "**" not in node.inner_text()
    page.locator("#tree button.node", has_text="7. Warranty").click()
    expect(abstract).to_have_text("Warranty: The Aurora K3 comes with a two-year guarantee from the date of purchase.")
    # The heading over it all is the manual under another name, and reads as the manual does.
    page.locator("#tree button.node", has_text="§ Aurora K3 Kettle Manual").click()
    expect(abstract).to_have_text(
        "Aurora K3 Kettle Manual: Thank you for choosing the Aurora K3, a 1.7 litre cordless kettle."
    )


def _steps_fix_and_warranty(page) -> None:
    """Step 3: the steps are quoted as a list, the fix comes with its error code, the warranty question
    cites the Warranty section; right passages are Confident, weak ones are not."""
    _new_chat(page)
    descale = ask(page, "How do I descale the kettle?", 0)
    expect(descale.locator(".body ol ol li")).to_contain_text(STEPS)  # the steps, as a list under the quote
    expect(descale.locator(".mood")).to_have_text("Confident")
    assert _sources(descale) == ["1 · 2. Descaling"], _sources(descale)

    fix = ask(page, "How do I fix error E3?", 1)
    expect(fix.locator(".body")).to_contain_text(
        "Error E3 means the base is not detected. Lift the kettle and seat it firmly on the base again."
    )
    expect(fix.locator(".body")).not_to_contain_text("E1")
    expect(fix.locator(".mood")).to_have_text("Confident")

    warranty = ask(page, "How long is the warranty?", 2)
    expect(warranty.locator(".body")).to_contain_text("two-year guarantee")
    assert _sources(warranty) == ["1 · 7. Warranty"], _sources(warranty)
    expect(warranty.locator(".mood")).to_have_text("Confident")
    warranty.locator("a.cite").first.click()
    expect(page.locator("#panel")).to_contain_text("7. Warranty")
    page.get_by_role("button", name="Close the source").click()

    weak = ask(page, "How do I clean the kettle base?", 3)
    expect(weak.locator(".body")).to_contain_text("Nothing I found clearly answers this")
    expect(weak.locator(".mood")).to_have_text("Uncertain")


def _the_sidebar_finds_what_the_person_said(page) -> str:
    """Step 5: searching "descale" lists the conversation where the person talked about descaling, not the
    one where only an answer quoted the manual's "To descale:"; asking again never cites the question.
    Returns the address of that last conversation, the steps alone in it."""
    _new_chat(page)
    limescale = ask(page, "What should I do about limescale?", 0)
    expect(limescale.locator(".body")).to_contain_text("To descale:")
    # The list is refreshed when the answer ends, and a refresh that comes back before the search is
    # sent shows every conversation for a moment: what is checked is the search's own answer.
    with page.expect_response(lambda response: "/api/sessions?" in response.url and "q=descale" in response.url):
        page.get_by_label("Search conversations by title and content").fill("descale")
    listed = page.locator("#sessions li")
    expect(listed).to_have_count(1)
    expect(listed).to_contain_text("How do I descale the kettle?")
    page.get_by_label("Search conversations by title and content").fill("")
    expect(page.locator("#sessions li")).to_have_count(2)

    _new_chat(page)
    again = ask(page, "How do I descale the kettle?", 0)
    assert _sources(again) == ["1 · 2. Descaling"], "the earlier question is never a source of its answer"
    expect(again.locator(".body")).not_to_contain_text("How do I descale the kettle?")
    return page.url


def _a_session_that_only_searched_resolves_a_follow_up(browser, base: str, user) -> None:
    """Step 7 (the API, as an integration would use it): after a search, a follow-up's "it" is the kettle
    of the manual in the session's working set, and the Warranty section answers it."""
    token = Token.objects.create(user=user).key
    client = browser.new_context(base_url=base, extra_http_headers={"Authorization": f"Token {token}"})
    session = client.request.post("/api/sessions", data={}).json()["session_id"]
    searched = {"query": "How do I descale the kettle?", "session_id": session}
    first = client.request.post("/api/retrieval/search", data=searched)
    assert first.ok, first.text()
    body = {"query": "and how long is it under warranty?", "session_id": session, "debug_search_trace": True}
    found = client.request.post("/api/retrieval/search", data=body).json()
    rewrite = found["query_plan"]["rewrite"]
    assert rewrite["rewritten"] and rewrite["method"] == "working_set", rewrite
    assert found["query_plan"]["rewritten_query"] == "and how long is Aurora K3 Kettle under warranty?"
    assert "7. Warranty" in [hit["title"] for hit in found["results"][:2]], found["results"]
    client.close()


def test_a_kettle_manual_gives_its_steps_fix_and_warranty_and_the_sidebar_finds_what_was_said(
    browser, server, tmp_path
):
    user = UserFactory()
    page, errors = open_page(browser, server)
    sign_in(page, user.username)
    _upload(page, tmp_path, {"kettle_manual.md": MANUAL})
    _manual_reads_as_a_person_would_name_it(page)
    _steps_fix_and_warranty(page)
    steps_url = _the_sidebar_finds_what_the_person_said(page)
    _a_session_that_only_searched_resolves_a_follow_up(browser, server, user)
    _screenshots(browser, server, page.context.storage_state(), {"steps": steps_url})
    assert not errors, errors


# --- 4: a printed PDF -----------------------------------------------------------------------------------


def test_a_printed_pdf_is_named_by_its_heading_or_file_and_renamed_on_the_documents_page(browser, server, tmp_path):
    pages = ["Aurora K3 Kettle Manual", "Never immerse the base in water.", "The guarantee lasts two years."]
    outline = [("Aurora K3 Kettle Manual", 0, 0), ("Safety", 1, 1), ("Warranty", 1, 2)]
    user = UserFactory()
    page, errors = open_page(browser, server)
    sign_in(page, user.username)
    _upload(
        page,
        tmp_path,
        {
            "print.pdf": files.pdf(pages, outline=outline, title="about:blank"),
            "bike_manual_v2.pdf": files.pdf(["Oil the chain monthly."], title="about:blank"),
        },
    )
    listed = page.locator("#documents")
    expect(listed.get_by_text("Aurora K3 Kettle Manual", exact=True)).to_be_visible()  # its first heading
    expect(listed.get_by_text("Bike manual v2", exact=True)).to_be_visible()  # no heading: its file name
    expect(listed).not_to_contain_text("about:blank")

    row = page.locator("#documents li", has_text="Bike manual v2")
    row.get_by_role("button", name="Rename Bike manual v2").click()
    page.get_by_label("New title").fill("  Bike   chain care ")
    page.keyboard.press("Enter")
    expect(page.locator(".toast", has_text="Renamed to Bike chain care")).to_be_visible()
    page.reload()
    expect(listed.get_by_text("Bike chain care", exact=True)).to_be_visible()
    expect(listed.get_by_text("Bike manual v2", exact=True)).to_have_count(0)
    _screenshots(browser, server, page.context.storage_state(), {"documents": "/documents/"})
    assert not errors, errors
