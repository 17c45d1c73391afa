"""The operators' journeys in a real headless Chromium against a real Daphne: sign in to the admin, read
the dashboard for a period and a user, open a failed turn's trace and its conversation, add a document
through the upload form, and delete a user with everything they own; every admin list fits 1440 px.
Screenshots at 1440 px, light and dark, go to var/screenshots/ops-*.png and admin-*.png."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from decimal import Decimal

from django.db import connections
from django.utils import timezone
from rest_framework.test import APIClient

from documents_app.models import Document
from foundation.models import ModelCall
from retrieval_app.models import SearchTrace
from tests.browser.support import JOURNEY, PASSWORD, SCREENSHOTS, expect, open_page
from tests.factories import DocumentFactory, UserFactory, index_document
from tests.samples import KETTLE

pytestmark = JOURNEY

ADMIN_LISTS = {
    "sessions": "/admin/sessions_app/chatsession/",
    "messages": "/admin/sessions_app/message/",
    "archives": "/admin/sessions_app/archive/",
    "memories": "/admin/sessions_app/memory/",
    "documents": "/admin/documents_app/document/",
    "nodes": "/admin/documents_app/documentnode/",
    "traces": "/admin/retrieval_app/searchtrace/",
    "model-calls": "/admin/foundation/modelcall/",
    "users": "/admin/auth/user/",
}


def _activity(user) -> str:
    """A user who chatted about a manual (with a follow-up), remembered it, had a search fail and a
    document fail; and a day of hosted model calls with their cost. Returns the conversation's id."""
    index_document(user, "kettle.md", KETTLE)
    client = APIClient()
    client.force_authenticate(user)
    session = client.post("/api/ai/chat", {"message": "How often should I descale the Aurora kettle?"}, format="json")
    session_id = session.json()["session_id"]
    client.post(
        "/api/ai/chat", {"message": "and what does its warranty cover?", "session_id": session_id}, format="json"
    )
    client.post("/api/ai/chat", {"message": "My name is Dana Whitfield.", "session_id": session_id}, format="json")
    client.post(f"/api/sessions/{session_id}/commit", {}, format="json")
    client.post("/api/memory/recall", {"query": "descaling"}, format="json")
    client.post("/api/retrieval/find", {"query": "warranty of the kettle"}, format="json")
    SearchTrace.objects.create(
        owner=user,
        session_id=session_id,
        kind="chat",
        query="What is the lid hinge made of?",
        outcome="retrieval_failed",
        error="Search failed, so this answer uses no context: OperationalError: the index is being rebuilt",
        timings={"turn": 240.0},
    )
    DocumentFactory(owner=user, status="failed", title="scan.pdf", error="The PDF has no text layer (a scan?).")
    now = timezone.now()
    for hours in range(0, 30, 3):
        ModelCall.objects.create(
            kind="generation",
            purpose="chat",
            backend="litellm",
            model="gpt-4o-mini",
            owner=user,
            session_id=session_id,
            input_tokens=1200,
            output_tokens=180,
            cost_usd=Decimal("0.000288"),
            latency_ms=900,
            created_at=now - timedelta(hours=hours),
        )
    ModelCall.objects.create(
        kind="embedding",
        purpose="recall",
        backend="litellm",
        model="text-embedding-3-small",
        owner=user,
        ok=False,
        error="APIConnectionError: connection refused",
        created_at=now,
    )
    return session_id


def _fits(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth + 1")


def test_an_operator_reads_the_dashboard_a_trace_and_a_conversation_and_keeps_the_data_whole(browser, server, tmp_path):
    operator = UserFactory(username="operator", is_staff=True, is_superuser=True)
    user = UserFactory(username="dana")
    # In a thread of its own: this one runs Playwright's event loop, which the services' pushes avoid.
    with ThreadPoolExecutor(max_workers=1) as pool:
        pool.submit(_activity, user).result()
        pool.submit(connections.close_all).result()  # that thread's connection, before the database is dropped
    page, errors = open_page(browser, server)
    page.goto("/admin/login/?next=/admin/")
    page.get_by_label("Username").fill(operator.username)
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()

    # The dashboard, one click from every admin page: how busy, how fast, how costly, what failed.
    page.get_by_role("link", name="Dashboard").click()
    expect(page.get_by_role("heading", name="How busy")).to_be_visible()
    figures = page.locator("section[aria-labelledby=h-activity] .ops-figures")
    expect(figures).to_contain_text("4chat turns")
    expect(figures).to_contain_text("1recalls")
    expect(page.locator("section[aria-labelledby=h-latency]")).to_contain_text("first token")
    expect(page.locator("section[aria-labelledby=h-cost]")).to_contain_text("gpt-4o-mini")
    expect(page.locator("section[aria-labelledby=h-errors]")).to_contain_text("the index is being rebuilt")
    expect(page.locator("section[aria-labelledby=h-errors]")).to_contain_text("connection refused")
    expect(page.locator("section[aria-labelledby=h-ingestion]")).to_contain_text("no text layer")
    expect(page.locator("section[aria-labelledby=h-health]")).to_contain_text("No worker is consuming the bulk queue.")
    # A chart's numbers on hover: each bar carries its own.
    assert page.locator("section[aria-labelledby=h-activity] svg rect title").count() > 0
    assert _fits(page)

    # Seven days, for one user.
    page.get_by_role("link", name="7 days").click()
    page.get_by_label("User").fill("dana")
    page.get_by_role("button", name="Show").click()
    expect(page).to_have_url(re.compile(r"period=7d&user=dana"))
    expect(page.locator(".ops-bar")).to_contain_text("for dana")
    expect(page.locator("section[aria-labelledby=h-cost] .ops-figures")).to_contain_text("$0.0029")

    # The failed turn's trace, then a turn that went well, read without opening any JSON.
    page.locator("section[aria-labelledby=h-errors]").get_by_role("link", name=re.compile("lid hinge")).click()
    expect(page.locator("h2#h-query")).to_contain_text("retrieval failed")
    page.go_back()
    page.get_by_role("link", name="conversation").first.click()
    expect(page.get_by_role("heading", name="What it cost")).to_be_visible()
    expect(page.locator("section[aria-labelledby=h-archives]")).to_contain_text("archive_001")
    expect(page.locator("section[aria-labelledby=h-memories]")).to_contain_text("Dana Whitfield")
    session_url = page.url
    page.locator("section[aria-labelledby=h-traces]").get_by_role("link", name=re.compile("warranty")).click()
    expect(page.locator("#h-query").locator("xpath=..")).to_contain_text("searched as")
    expect(page.get_by_role("heading", name="Where the time went")).to_be_visible()
    expect(page.locator(".ops-waterfall")).to_contain_text("whole turn")
    expect(page.locator("section[aria-labelledby=h-results]")).to_contain_text("descale the Aurora kettle")
    expect(page.locator("main, #content").first).to_contain_text("Aurora Kettle Guide")
    expect(page.locator("pre.ops-pre")).to_be_hidden()  # the raw JSON, folded
    page.get_by_text("The raw trace (JSON)").click()
    expect(page.locator("pre.ops-pre")).to_be_visible()
    trace_url = page.url
    assert _fits(page)

    # Adding a document goes through the upload: the file field, its limit stated, indexed at once.
    page.goto("/admin/documents_app/document/add/")
    expect(page.locator("#document_form")).to_contain_text("Up to 50.0 MB")
    page.locator("#id_owner").fill(str(user.pk))
    page.locator("#id_title").fill("Router manual")
    (tmp_path / "router.md").write_text("# Router\n\n## Reset\n\nHold the reset button for ten seconds.\n")
    page.locator("#id_file").set_input_files(str(tmp_path / "router.md"))
    page.get_by_role("button", name="Save", exact=True).click()
    expect(page.locator(".messagelist")).to_contain_text("was added successfully")
    expect(page.locator("#result_list")).to_contain_text("Router manual")
    assert Document.objects.get(title="Router manual").uri.endswith(str(Document.objects.get(title="Router manual").id))

    # Every list fits the page at 1440 px, newest first.
    for name, path in ADMIN_LISTS.items():
        page.goto(path)
        assert _fits(page), f"{name} overflows at 1440 px"

    _screenshots(browser, server, page.context.storage_state(), session_url, trace_url)

    # Deleting the user says what goes with them, then takes it all.
    page.goto(f"/admin/auth/user/{user.pk}/delete/")
    expect(page.locator("#content")).to_contain_text("Documents (and their stored files): 3")
    page.get_by_role("button", name=re.compile("Yes, I.m sure")).click()
    expect(page.locator(".messagelist")).to_contain_text("deleted successfully")
    assert not Document.objects.filter(owner_id=user.pk).exists()
    assert not errors, errors


def _screenshots(browser, base: str, state, session_url: str, trace_url: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for scheme in ("light", "dark"):
        # A phone, too: an operator paged at night reads the dashboard and a trace there.
        phone, errors = open_page(browser, base, width=390, scheme=scheme, state=state)
        for name, path in (("ops-dashboard", "/admin/ops/?period=24h"), ("ops-trace", trace_url)):
            phone.goto(path)
            phone.wait_for_load_state("networkidle")
            assert _fits(phone), f"{name} overflows at 390 px"
            phone.screenshot(path=str(SCREENSHOTS / f"{name}-390-{scheme}.png"))
        assert not errors, errors
        phone.context.close()
        page, errors = open_page(browser, base, width=1440, scheme=scheme, state=state)
        for name, path in (
            ("ops-dashboard", "/admin/ops/?period=24h"),
            ("ops-trace", trace_url),
            ("ops-session", session_url),
            ("admin-traces", ADMIN_LISTS["traces"]),
            ("admin-sessions", ADMIN_LISTS["sessions"]),
            ("admin-documents", ADMIN_LISTS["documents"]),
            ("admin-model-calls", ADMIN_LISTS["model-calls"]),
        ):
            page.goto(path)
            page.wait_for_load_state("networkidle")
            page.screenshot(path=str(SCREENSHOTS / f"{name}-1440-{scheme}.png"), full_page=name.startswith("ops"))
        assert not errors, errors
        page.context.close()
    print(f"\nscreenshots in {SCREENSHOTS}")
