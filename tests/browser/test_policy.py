"""The Content-Security-Policy in a real headless Chromium against a real Daphne: markup injected into a page
the server sent (a script, an inline handler) does not run and is reported, the account page's revoke still
asks first, and the API documentation (Swagger UI and Redoc) works under the policy."""

from __future__ import annotations

import re

from tests.browser.support import CSP_REFUSAL, JOURNEY, PASSWORD, expect, open_page, sign_in
from tests.factories import UserFactory

pytestmark = JOURNEY

REDOC_LOGO = "https://cdn.redoc.ly/redoc/logo-mini.svg"
INJECTED = (
    '<script>window.__injected = "script"</script>'
    '<img src="/static/none.png" onerror="window.__injected = \'handler\'">'
    '<a id="injected-link" href="javascript:window.__injected = \'link\'">injected</a>'
)


def test_markup_injected_into_a_page_does_not_run_and_the_page_still_works(browser, server):
    UserFactory(username="dana")
    page, errors = open_page(browser, server)
    sign_in(page, "dana", at="/account/")

    # The account page as the server sent it, with its headers, but with script and a handler slipped into
    # its body, as a flaw in escaping would.
    def inject(route):
        response = route.fetch()
        route.fulfill(response=response, body=response.text().replace("</h1>", "</h1>" + INJECTED, 1))

    page.route(re.compile(r"/account/$"), inject)
    page.goto("/account/")
    page.locator("#injected-link").click()
    page.wait_for_load_state("networkidle")
    assert page.evaluate("window.__injected") is None
    refusals = [error for error in errors if CSP_REFUSAL in error]
    assert any("script-src" in refusal for refusal in refusals), errors
    page.unroute(re.compile(r"/account/$"))
    errors.clear()

    # The page's own behaviour comes from its script files: a token is made, copied, and revoking it asks
    # first, in the page's dialog (it was an inline onsubmit).
    page.goto("/account/")
    page.get_by_label("Name").fill("kitchen display")
    page.get_by_role("button", name="Create a token").click()
    expect(page.locator("#new-token")).to_be_visible()
    page.get_by_role("button", name="Revoke kitchen display").click()
    expect(page.locator("#confirm-dialog")).to_contain_text("Revoke the token “kitchen display”?")
    page.locator("#confirm-ok").click()
    expect(page.get_by_role("status")).to_contain_text("The token was revoked.")
    expect(page.locator("main")).not_to_contain_text("kitchen display")
    assert not errors, errors
    page.context.close()


def test_the_api_documentation_works_under_the_policy(browser, server):
    UserFactory(username="dana")
    page, errors = open_page(browser, server)
    sign_in(page, "dana", at="/chat/")

    page.goto("/api/docs/")
    expect(page.locator(".swagger-ui .info .title")).to_contain_text("Recollect API")
    expect(page.locator(".opblock-tag-section").first).to_be_visible()
    policy = page.request.get("/api/docs/").headers["content-security-policy"]
    assert "script-src 'self';" in policy and "unsafe-inline" not in policy

    page.goto("/api/redoc/")
    expect(page.locator(".api-info h1")).to_contain_text("Recollect API")
    expect(page.locator(".menu-content")).to_contain_text("sessions")
    policy = page.request.get("/api/redoc/").headers["content-security-policy"]
    assert "script-src 'self';" in policy and "style-src 'self' 'unsafe-inline';" in policy
    # Redoc's footer shows its maker's logo from their CDN; the policy refuses it (no page fetches another
    # site's image) and Redoc leaves the logo out. Nothing else may be refused.
    assert [error for error in errors if REDOC_LOGO not in error] == [], errors
    page.context.close()


def test_every_admin_form_and_list_works_under_the_policy(browser, server):
    """The admin's index, each model's list and add form, a user's page and its password form: nothing
    they need is refused (the journeys in test_operations.py go through the operators' pages)."""
    admin = UserFactory(username="olga", is_staff=True, is_superuser=True)
    page, errors = open_page(browser, server)
    page.goto("/admin/login/?next=/admin/")
    page.get_by_label("Username").fill("olga")
    page.get_by_label("Password").fill(PASSWORD)
    page.get_by_role("button", name="Log in").click()
    links = page.locator("#content-main a.addlink, #content-main th a").evaluate_all("links => links.map(a => a.href)")
    assert len(links) >= 10, links
    for link in [*links, f"/admin/auth/user/{admin.pk}/change/", f"/admin/auth/user/{admin.pk}/password/"]:
        page.goto(link)
        page.wait_for_load_state("networkidle")
    assert not errors, errors
    page.context.close()
