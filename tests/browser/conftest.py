"""A real headless Chromium (the system's, driven by Playwright) and real Daphne servers on the test
database for the browser journeys."""

from __future__ import annotations

import os

import pytest

from foundation.celery import app as celery_app
from tests.browser.support import CHROMIUM, SCREENSHOTS
from tests.helpers import server_env, start_daphne


@pytest.fixture(scope="module")
def browser():
    playwright_api = pytest.importorskip("playwright.sync_api", reason="Playwright for Python is not installed")
    if CHROMIUM is None:
        pytest.skip("no Chromium on this machine (apt-get install chromium)")
    # Playwright's sync API keeps an event loop running in this thread; the test's own database work
    # (creating rows, flushing them after) is synchronous and safe here, which Django cannot tell.
    os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
    try:
        with playwright_api.sync_playwright() as playwright:
            chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            yield chromium
            chromium.close()
    finally:
        os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)


def _start_server(**env: str):
    """Daphne on the test database, its log in var/screenshots/server.log."""
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return start_daphne(env=server_env(DJANGO_ALLOW_ASYNC_UNSAFE="", **env), log=SCREENSHOTS / "server.log")


@pytest.fixture
def server():
    base, process = _start_server()
    yield base
    process.terminate()
    process.wait(timeout=20)


@pytest.fixture
def workerless_server(tmp_path):
    """A server whose jobs go to the broker, as in development, with no worker to take them."""
    base, process = _start_server(DJANGO_SETTINGS_MODULE="config.settings.dev", MEDIA_ROOT=str(tmp_path))
    yield base
    process.terminate()
    process.wait(timeout=20)
    celery_app.control.purge()  # the jobs it queued on the test broker, for rows already gone


@pytest.fixture
def model_server(fake_llm):
    """A server whose answers come from the loopback model (tests/llm_server.py), streamed."""
    base, process = _start_server(
        LLM_MODEL="openai/test-chat", LLM_API_BASE=fake_llm.url, LLM_API_KEY="sk-test", LLM_MAX_RETRIES="0"
    )
    yield base
    process.terminate()
    process.wait(timeout=20)


@pytest.fixture
def sign_up_server():
    """A server on which anyone may ask for an account (SIGN_UP_MODE=approval)."""
    base, process = _start_server(SIGN_UP_MODE="approval")
    yield base
    process.terminate()
    process.wait(timeout=20)
