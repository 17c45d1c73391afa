"""The main journeys in a real headless Chromium against a real Daphne: sign in, upload a document and
watch it become ready, chat with a follow-up, open a citation, reload and find the conversation,
remember it and see the memory, delete the memory, log out. Screenshots of every page at 390 px and
1440 px, light and dark, go to var/screenshots/ (the path is printed).

Chromium comes from the system (Debian's ``chromium`` package), driven by Playwright for Python; the
journeys skip, saying why, where either is missing. Indexing runs inside the server (the test settings
run tasks eagerly), so no worker is needed.
"""

from __future__ import annotations

import re

from django.contrib.auth.hashers import PBKDF2PasswordHasher

from sessions_app import services as sessions
from tests.browser.support import JOURNEY, PASSWORD, SCREENSHOTS, ask, expect, open_page, sign_in
from tests.factories import UserFactory

pytestmark = JOURNEY

MANUAL = """# Aurora kettle manual

## Descaling

Descale the Aurora kettle every four weeks with a solution of citric acid. Fill it to the MAX line, boil,
and leave it for twenty minutes before rinsing twice.

## Warranty

The Aurora kettle is under warranty for two years from the date of purchase. The warranty covers the
heating element and the lid hinge, but not limescale damage.
"""


def test_sign_in_upload_chat_cite_reload_remember_forget_and_log_out(browser, server, tmp_path):
    user = UserFactory()
    page, errors = open_page(browser, server)
    sign_in(page, user.username)

    # Without a language model, the chat says so once, with the way to configure one, until dismissed.
    notice = page.locator("#model-notice")
    expect(notice).to_be_visible()
    expect(notice.get_by_role("link", name="Set one up")).to_have_attribute("href", "/settings/#language-model")
    page.get_by_role("button", name="Dismiss this notice").click()
    page.reload()
    expect(page.locator("#socket-state")).to_have_text("")
    expect(notice).to_be_hidden()

    # Upload, and watch the status pushed over the websocket until it is ready.
    page.get_by_role("navigation").get_by_role("link", name="Documents").click()
    expect(page.get_by_text("Up to 50.0 MB each")).to_be_visible()
    manual = tmp_path / "kettle.md"
    manual.write_text(MANUAL)
    page.locator("#files").set_input_files(str(manual))
    row = page.locator("#documents li", has_text="Aurora kettle manual")
    expect(row.locator(".badge")).to_have_text("ready", timeout=90_000)
    # Refused before sending (a type it cannot read), and failed in indexing (a damaged PDF): both said.
    (tmp_path / "tool.exe").write_bytes(b"MZ binary")
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4\n1 0 obj << /Type /Catalog >> garbage without pages\n")
    page.locator("#files").set_input_files([str(tmp_path / "tool.exe"), str(tmp_path / "broken.pdf")])
    expect(page.locator("#uploads")).to_contain_text(".exe files cannot be read")
    broken = page.locator("#documents li", has_text="broken.pdf")
    expect(broken.locator(".badge")).to_have_text("failed", timeout=60_000)
    expect(broken.locator(".error-box")).to_contain_text("Could not index:")
    row.get_by_role("button", name=re.compile("Browse")).click()
    page.locator("#tree button.node", has_text="Warranty").click()
    expect(page.locator("#node")).to_contain_text("L1 · overview")
    page.get_by_role("button", name="Show the full text (L2)").click()
    expect(page.locator("#node pre")).to_contain_text("two years")

    # Chat about that document (the scope can be widened to several, or to everything, in the chat),
    # with a follow-up that depends on the first question.
    row.get_by_role("link", name="Chat about it").click()
    expect(page.locator("#scope-label")).to_have_text("Aurora kettle manual")
    page.get_by_label("Documents to answer from").click()
    expect(page.get_by_role("checkbox", name="Aurora kettle manual")).to_be_checked()
    page.get_by_label("Documents to answer from").click()
    ask(page, "How often should I descale the Aurora kettle?", 0)
    expect(page).to_have_url(re.compile(r"/chat/[0-9a-f-]{36}$"))
    session_url = page.url
    ask(page, "and how long is it under warranty?", 1)
    last = page.locator(".msg.assistant").last
    expect(last.locator(".body ol li").first).to_contain_text("two years")  # Markdown, not raw text
    expect(last.locator(".mood")).to_have_text("Confident")

    # A citation opens its source beside the chat: document, section, L0, L1, and L2 on demand.
    last.locator("a.cite").first.click()
    panel = page.locator("#panel")
    expect(panel).to_contain_text("Aurora kettle manual")
    expect(panel).to_contain_text("L0 · abstract")
    panel.get_by_role("button", name="Show the full text (L2)").click()
    expect(panel.locator(".l2")).to_contain_text("warranty")

    # A reload resumes the conversation, which the sidebar lists.
    page.reload()
    expect(page.locator(".msg.user")).to_have_count(2)
    expect(page.locator("#sessions a[aria-current=page]")).to_contain_text("How often should I descale")
    page.get_by_label("Search conversations by title and content").fill("warranty")
    expect(page.locator("#sessions li")).to_have_count(1)

    # Tell it something about oneself: it is noted as it is said, and the answer says what was remembered.
    ask(page, "My name is Dana Whitfield.", 2)
    told = page.locator(".msg.assistant").last
    expect(told.locator(".body")).to_have_text("Noted: you are called Dana Whitfield. I'll keep that in mind.")
    expect(told.locator(".remembered")).to_contain_text("Is called Dana Whitfield.")
    # Remembering the conversation archives it; the memory was already known.
    page.get_by_role("button", name="Remember this conversation").click()
    learned = page.locator(".learned").last
    expect(learned).to_contain_text("Already remembered (1)")
    expect(learned).to_contain_text("Name: Is called Dana Whitfield.")

    # An API token for an integration: named, shown once, working at once, listed afterwards by name.
    page.get_by_role("navigation").get_by_role("link", name="Account").click()
    page.get_by_label("Name").fill("kitchen display")
    page.get_by_role("button", name="Create a token").click()
    key = page.locator("#new-token").inner_text()
    # (A wrong token is refused outright, so the page's own cookie cannot make this pass.)
    assert page.request.get("/api/sessions", headers={"Authorization": f"Token {key}"}).status == 200
    page.goto("/account/")
    expect(page.locator("#token-list")).to_contain_text("kitchen display")
    expect(page.locator("#token-list")).not_to_contain_text(key)
    page.goto(session_url)

    # No message may inject HTML or script.
    page.evaluate(
        """() => { const box = document.createElement('div');
        Recollect.renderMarkdown('<img src=x onerror="window.__xss=1"><script>window.__xss=2</script>**bold**', box);
        window.__html = box.innerHTML; }"""
    )
    page.wait_for_timeout(200)
    assert page.evaluate("window.__xss") is None
    assert "onerror" not in page.evaluate("window.__html") and "<strong>bold</strong>" in page.evaluate("window.__html")
    # Nor make the reader's browser fetch an image from another site: it becomes a link, not a request.
    outside: list[str] = []
    page.on("request", lambda request: outside.append(request.url) if "203.0.113.5" in request.url else None)
    page.evaluate(
        """() => { const box = document.createElement('div'); document.body.append(box);
        Recollect.renderMarkdown('![pixel](http://203.0.113.5/pixel.png) <img src="https://203.0.113.5/t.gif">', box);
        window.__images = box.querySelectorAll('img').length; window.__text = box.textContent; box.remove(); }"""
    )
    page.wait_for_timeout(300)
    assert page.evaluate("window.__images") == 0 and "not loaded from another site" in page.evaluate("window.__text")
    assert not outside, outside

    _screenshots(browser, server, page.context.storage_state(), session_url)

    # The memory is listed, linked to its conversation, and can be forgotten.
    page.get_by_role("navigation").get_by_role("link", name="Memories").click()
    memory = page.locator(".memory", has_text="Dana Whitfield")
    link = memory.get_by_role("link", name="From this conversation")
    expect(link).to_have_attribute("href", re.compile(r"/chat/[0-9a-f-]{36}#m-\d+$"))
    link.click()  # the conversation opens at the turn the memory was drawn from
    expect(page.locator(".msg.user.highlight")).to_have_text(re.compile("Dana Whitfield"))
    page.go_back()
    memory = page.locator(".memory", has_text="Dana Whitfield")
    memory.get_by_role("button", name=re.compile("Delete")).click()
    page.get_by_role("button", name="Forget").click()
    expect(page.locator(".memory", has_text="Dana Whitfield")).to_have_count(0)
    page.reload()
    expect(page.locator(".memory", has_text="Dana Whitfield")).to_have_count(0)

    # Log out from the page's own button; another tab of the same browser is signed out at once too.
    other_tab = page.context.new_page()
    other_tab.goto(session_url)
    expect(other_tab.locator("#socket-state")).to_have_text("")  # its socket is open
    page.get_by_role("button", name="Log out").click()
    expect(page).to_have_url(re.compile(r"/accounts/login/"))
    expect(other_tab.locator("#banner")).to_contain_text("You are signed out")
    expect(other_tab.locator(".msg.user")).to_have_count(3)
    other_tab.get_by_label("Message", exact=True).fill("Still there?")
    other_tab.keyboard.press("Enter")
    other_tab.wait_for_timeout(500)
    expect(other_tab.locator(".msg.user")).to_have_count(3)  # nothing new was sent
    other_tab.close()
    page.goto(session_url)
    expect(page).to_have_url(re.compile(r"/accounts/login/"))
    assert not errors, errors


def _screenshots(browser, base: str, state, session_url: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for scheme in ("light", "dark"):
        for width in (390, 1440):
            page, errors = open_page(browser, base, width=width, scheme=scheme, state=state)
            for name, path in (
                ("chat", session_url),
                ("documents", "/documents/"),
                ("memories", "/memories/"),
                ("account", "/account/"),
                ("settings", "/settings/"),
            ):
                page.goto(path)
                page.wait_for_load_state("networkidle")
                page.screenshot(path=str(SCREENSHOTS / f"{name}-{width}-{scheme}.png"))
                if name == "chat":
                    page.locator(".msg.assistant a.cite").last.click()
                    expect(page.locator("#panel")).to_contain_text("L1 · overview")
                    page.screenshot(path=str(SCREENSHOTS / f"source-{width}-{scheme}.png"))
            assert not errors, errors
            page.context.close()
            page, errors = open_page(browser, base, width=width, scheme=scheme)
            page.goto("/accounts/login/")
            page.screenshot(path=str(SCREENSHOTS / f"login-{width}-{scheme}.png"))
            assert not errors, errors
            page.context.close()
    print(f"\nscreenshots in {SCREENSHOTS}")


ANSWER = """## Plan

| step | when |
|---|---|
| descale | every four weeks |

```python
print("rinse twice")
```

<img src=x onerror="window.__xss = 1"> <script>window.__xss = 2</script>
"""


def test_a_model_answer_streams_as_markdown_stops_regenerates_and_reports_a_model_outage(
    browser, model_server, fake_llm
):
    user = UserFactory()
    page, errors = open_page(browser, model_server)
    sign_in(page, user.username)

    fake_llm.reply = lambda messages: ANSWER
    ask(page, "Plan my kettle care.", 0)
    answer = page.locator(".msg.assistant").last
    expect(answer.locator("h2")).to_have_text("Plan")
    expect(answer.locator("table td").last).to_have_text("every four weeks")
    expect(answer.locator("pre .copy-code")).to_be_visible()
    assert page.evaluate("window.__xss") is None
    assert answer.locator("img[onerror], script").count() == 0

    # A slow answer: the turn shows its state, then streams; Stop ends it, recorded as stopped.
    fake_llm.reply = lambda messages: " ".join(f"word{i}" for i in range(400))
    fake_llm.token_delay_s = 0.3
    page.get_by_label("Message", exact=True).fill("Count slowly.")
    page.keyboard.press("Enter")
    expect(page.locator(".msg.assistant .state")).to_be_visible()
    expect(page.locator(".msg.assistant").last.locator(".body")).to_contain_text("word1", timeout=30_000)
    page.get_by_role("button", name="Stop").click()
    expect(page.locator(".msg.assistant").last).to_contain_text("(stopped)", timeout=30_000)
    expect(page.get_by_role("button", name="Send", exact=True)).to_be_enabled()

    # Regenerate replaces the last answer; Edit puts the last question back in the box, and sending
    # it replaces that question and its answer. A reload shows each question once.
    fake_llm.token_delay_s = 0.0
    fake_llm.reply = lambda messages: "Counted."
    page.locator(".msg.assistant").last.get_by_role("button", name="Ask the last question again").click()
    expect(page.locator(".msg.assistant").last.locator(".body")).to_have_text("Counted.")
    expect(page.locator(".msg.user")).to_have_count(2)
    page.get_by_role("button", name="Edit and send the last question again").click()
    expect(page.get_by_label("Message", exact=True)).to_have_value("Count slowly.")
    expect(page.locator("#editing")).to_be_visible()
    fake_llm.reply = lambda messages: "One, two, three."
    page.get_by_label("Message", exact=True).fill("Count quickly.")
    page.keyboard.press("Enter")
    expect(page.locator(".msg.assistant").last.locator(".body")).to_have_text("One, two, three.")
    page.reload()
    expect(page.locator(".msg.assistant").last.locator(".body")).to_have_text("One, two, three.")
    expect(page.locator(".msg.user .body")).to_have_text(["Plan my kettle care.", "Count quickly."])
    expect(page.locator(".msg.assistant")).to_have_count(2)

    # The model is down: the error event's message is shown where the answer would be.
    fake_llm.failures = 100
    page.get_by_label("Message", exact=True).fill("Are you there?")
    page.keyboard.press("Enter")
    failed = page.locator(".msg.assistant").last
    expect(failed.locator(".error-box")).to_contain_text("The model could not answer", timeout=30_000)
    expect(failed.locator(".mood")).to_have_text("Sorry")
    expect(page.get_by_role("button", name="Send", exact=True)).to_be_enabled()

    # Rename the conversation (after copying its id, which must leave the id shown), then delete it
    # after confirming.
    page.locator("#copy-id").click()
    expect(page.locator("#conv-id")).to_have_text(re.compile(r"^[0-9a-f]{8}$"))
    page.get_by_role("button", name="Rename").click()
    page.get_by_label("New title").fill("Kettle care")
    page.keyboard.press("Enter")
    expect(page.locator("#conv-title")).to_have_text("Kettle care")
    expect(page.locator("#sessions a[aria-current=page]")).to_contain_text("Kettle care")
    page.get_by_role("button", name="Delete", exact=True).click()
    page.locator("#confirm-dialog").get_by_role("button", name="Delete").click()
    expect(page).to_have_url(re.compile(r"/chat/$"))
    expect(page.locator("#sessions")).to_contain_text("No conversations yet.")
    assert not errors, errors


def test_without_a_worker_the_documents_page_says_nothing_is_being_indexed(browser, workerless_server, tmp_path):
    user = UserFactory()
    # The development settings do not know the tests' fast hasher.
    user.password = PBKDF2PasswordHasher().encode(PASSWORD, "journeysalt", iterations=1000)
    user.save(update_fields=["password"])
    page, errors = open_page(browser, workerless_server)
    sign_in(page, user.username)
    page.goto("/documents/")
    (tmp_path / "notes.md").write_text("# Notes\n\nNothing urgent.")
    page.locator("#files").set_input_files(str(tmp_path / "notes.md"))
    expect(page.locator("#documents li", has_text="notes.md").locator(".badge")).to_contain_text("waiting")
    expect(page.locator("#banner")).to_contain_text("not being indexed right now", timeout=30_000)
    assert not errors, errors


def test_a_search_of_the_conversations_is_not_overtaken_by_an_older_listing(browser, server):
    """The list of every conversation asked for when the page opened answers after the search typed
    meanwhile: the search's results stay, not every conversation."""
    user = UserFactory()
    for title, said in (("Kettle", "How do I descale the kettle?"), ("Garden", "When do I prune the roses?")):
        session = sessions.session_create(owner=user, title=title)
        sessions.message_bulk_create(session=session, messages=[sessions.NewMessage(role="user", content=said)])
    page, errors = open_page(browser, server)
    sign_in(page, user.username)
    held = []  # the listings of every conversation, answered only once the search has been shown
    page.route(
        "**/api/sessions?*", lambda route: route.continue_() if "q=" in route.request.url else held.append(route)
    )
    page.goto("/chat/")
    page.get_by_label("Search conversations by title and content").fill("descale")
    expect(page.locator("#sessions li")).to_have_count(1)
    for route in held:
        route.continue_()
    page.wait_for_timeout(1000)
    listed = page.locator("#sessions li")
    expect(listed).to_have_count(1)
    expect(listed).to_contain_text("Kettle")
    assert not errors, errors
