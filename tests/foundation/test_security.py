"""Security outside any one endpoint: private uploads on disk, throttles that a forged header cannot
dodge, throttled sign-in pages, and debug pages that show no password or token."""

from __future__ import annotations

import importlib
import re
import stat
import sys
from pathlib import Path

import pytest
from django.core.cache import cache
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client, RequestFactory
from django.views.debug import technical_500_response
from rest_framework.authtoken.models import Token

from documents_app.models import Document
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _fresh_throttles():
    cache.clear()
    yield
    cache.clear()


def test_uploaded_documents_are_readable_by_the_service_alone(settings):
    user = UserFactory()
    client = Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    notes = SimpleUploadedFile("notes.md", b"# Notes\n\nThe shed key is under the blue pot.\n")
    response = client.post("/api/documents/upload", {"file": notes})
    assert response.status_code in (201, 202), response.content[:300]
    stored = Path(Document.objects.get(owner=user).file.path)
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    folder = stored.parent
    while folder != Path(settings.MEDIA_ROOT):
        assert stat.S_IMODE(folder.stat().st_mode) == 0o700, folder
        folder = folder.parent


def test_a_new_x_forwarded_for_per_request_does_not_reset_the_token_throttle():
    client = Client()
    answers = [
        client.post(
            "/api/auth/token",
            {"username": "dana", "password": f"guess-{attempt}"},
            content_type="application/json",
            HTTP_X_FORWARDED_FOR=f"203.0.113.{attempt}",
        ).status_code
        for attempt in range(25)
    ]
    assert answers[:20] == [400] * 20 and set(answers[20:]) == {429}


@pytest.mark.parametrize("path", ["/accounts/login/", "/admin/login/"])
def test_sign_in_pages_are_throttled_like_the_token_endpoint(path):
    user = UserFactory(username="dana")
    user.set_password("the-right-password")
    user.save()
    client = Client()
    for attempt in range(20):
        assert client.post(path, {"username": "dana", "password": f"guess-{attempt}"}).status_code == 200
    refused = client.post(path, {"username": "dana", "password": "the-right-password"})
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    assert "_auth_user_id" not in client.session, "no session is made once the address is throttled"


def test_debug_pages_mask_url_passwords_and_api_tokens(settings):
    settings.DEBUG = True
    password = "-".join(["hunter2", "redis", "password"])  # not spelled out: the page shows this source line
    settings.REDIS_URL = f"redis://:{password}@127.0.0.1:6390/0"
    settings.CELERY_BROKER_URL = settings.REDIS_URL
    token = "".join(["0123456789abcdef", "-secret-token"])
    request = RequestFactory().get("/chat/", HTTP_AUTHORIZATION=f"Token {token}")
    try:
        broker = settings.REDIS_URL  # noqa: F841 (shown among the frame's variables)
        raise RuntimeError("boom")
    except RuntimeError:
        page = technical_500_response(request, *sys.exc_info()).content.decode()
    assert "boom" in page, "the page is still the debug page"
    assert password not in page
    assert token not in page
    assert "redis://:********************@127.0.0.1:6390/0" in page


def test_the_debug_page_still_shows_when_a_local_is_a_list_that_cannot_be_rebuilt(settings):
    from django import forms
    from django.contrib.admin.helpers import AdminErrorList

    settings.DEBUG = True
    request = RequestFactory().get("/admin/auth/user/add/")
    try:
        errors = AdminErrorList(forms.Form(), [])  # noqa: F841 (a list subclass among the frame's variables)
        raise RuntimeError("boom in a form")
    except RuntimeError:
        page = technical_500_response(request, *sys.exc_info()).content.decode()
    assert "boom in a form" in page


def test_uploads_stored_before_are_made_private_by_the_migration(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    folder = tmp_path / "documents" / "2025" / "03"
    folder.mkdir(parents=True)
    folder.chmod(0o755)
    stored = folder / "manual.pdf"
    stored.write_bytes(b"%PDF-1.4")
    stored.chmod(0o644)
    migration = importlib.import_module("documents_app.migrations.0004_private_upload_permissions")
    migration.restrict_stored_uploads(apps=None, schema_editor=None)
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert stat.S_IMODE(folder.stat().st_mode) == 0o700


STRICT_DIRECTIVES = (
    "script-src 'self';",
    "style-src 'self';",
    "object-src 'none';",
    "base-uri 'self';",
    "frame-ancestors 'none';",
    "img-src 'self' data: blob:;",
)
# Markup that a policy of script-src 'self' and style-src 'self' would refuse: a <script> with no src, an
# inline event handler, a javascript: link, a style attribute or element.
INLINE_CODE = re.compile(r"<script(?![^>]*\bsrc=)[^>]*>|\son[a-z]+\s*=|javascript:|\sstyle\s*=|<style", re.IGNORECASE)


def _policy(client, path: str) -> str:
    response = client.get(path)
    assert response.status_code == 200, (path, response.status_code)
    return response["Content-Security-Policy"]


@pytest.mark.parametrize("path", ["/accounts/login/", "/chat/", "/account/", "/admin/", "/admin/ops/", "/api/docs/"])
def test_every_page_runs_only_this_sites_scripts_and_styles(path):
    client = Client()
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    policy = _policy(client, path)
    for directive in STRICT_DIRECTIVES:
        assert directive in policy, (path, directive, policy)
    assert "unsafe" not in policy and "nonce" not in policy


def test_the_api_reference_alone_admits_inline_styles_and_never_inline_scripts():
    client = Client()
    client.force_login(UserFactory())
    policy = _policy(client, "/api/redoc/")
    assert "script-src 'self';" in policy and "style-src 'self' 'unsafe-inline';" in policy
    assert "worker-src 'self' blob:;" in policy and "frame-ancestors 'none'" in policy


def test_json_answers_need_no_policy(client):
    assert "Content-Security-Policy" not in client.get("/api/health")


def test_no_template_or_script_carries_inline_code():
    root = Path(__file__).resolve().parents[2]
    offenders = [
        f"{path.relative_to(root)}:{number}"
        for path in (root / "templates").rglob("*.html")
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if INLINE_CODE.search(line)
    ]
    assert offenders == []
