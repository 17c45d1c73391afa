"""API tokens from the account page: several named tokens, each key shown once and stored only as a
digest; each revocable on its own, by its owner alone; accepted by the API and the websocket, as is
the sign-in token ``POST /api/auth/token`` hands out."""

from __future__ import annotations

import re

import pytest
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.test import Client
from rest_framework.authtoken.models import Token

from accounts_app import tokens
from accounts_app.models import ApiToken
from config.asgi import application
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def browser(client, user):
    client.force_login(user)
    return client


def _create(browser: Client, name: str) -> str:
    page = browser.post("/account/", {"action": "create", "name": name}, follow=True).content.decode()
    assert "not shown again" in page and name in page
    return re.search(r'id="new-token">(rk_[0-9a-f]{40})<', page).group(1)


def test_a_new_key_is_shown_once_and_a_reload_makes_no_second_token(browser, user):
    created = browser.post("/account/", {"action": "create", "name": "kitchen display"})
    assert created.status_code == 302  # then shown by the page it leads to, so a reload re-sends nothing
    key = re.search(r'id="new-token">(rk_[0-9a-f]{40})<', browser.get(created.url).content.decode()).group(1)
    again = browser.get("/account/").content.decode()
    assert key not in again and "not shown again" not in again
    assert ApiToken.objects.filter(owner=user).count() == 1


def _api_status(key: str) -> int:
    return Client(headers={"Authorization": f"Token {key}"}).get("/api/sessions").status_code


def test_named_tokens_are_shown_once_listed_and_revoked_one_by_one(browser, user):
    agent, backup = _create(browser, "helpdesk bot"), _create(browser, "nightly backup")
    assert agent != backup and _api_status(agent) == 200 and _api_status(backup) == 200

    listing = browser.get("/account/").content.decode()
    assert "helpdesk bot" in listing and "nightly backup" in listing
    assert agent not in listing and backup not in listing  # never shown again
    assert agent[: tokens.SHOWN_CHARS] in listing and backup[: tokens.SHOWN_CHARS] in listing
    # Only a digest is stored: the database alone does not give a working key.
    stored = ApiToken.objects.filter(owner=user)
    assert stored.count() == 2 and not stored.filter(key_digest__in=[agent, backup]).exists()

    browser.post("/account/", {"action": "revoke", "token_id": stored.get(name="helpdesk bot").pk})
    assert _api_status(agent) == 401 and _api_status(backup) == 200
    assert "helpdesk bot" not in browser.get("/account/").content.decode()


def test_a_token_records_when_it_was_last_used(browser, user):
    key = _create(browser, "cli")
    assert "never" in browser.get("/account/").content.decode()
    _api_status(key)
    assert ApiToken.objects.get(owner=user).last_used_at is not None


def test_nobody_else_can_revoke_a_token(browser, user):
    key = _create(browser, "mine")
    stranger = Client()
    stranger.force_login(UserFactory())
    stranger.post("/account/", {"action": "revoke", "token_id": ApiToken.objects.get(owner=user).pk})
    assert _api_status(key) == 200


def test_the_sign_in_token_is_listed_and_revocable(browser, user):
    key = Token.objects.create(user=user).key
    listing = browser.get("/account/").content.decode()
    assert "Sign-in token" in listing and key[:8] in listing and key not in listing
    assert _api_status(key) == 200
    browser.post("/account/", {"action": "revoke-sign-in"})
    assert _api_status(key) == 401 and not Token.objects.filter(user=user).exists()


def test_an_inactive_persons_tokens_stop_working(browser, user):
    key = _create(browser, "agent")
    user.is_active = False
    user.save(update_fields=["is_active"])
    assert _api_status(key) == 401


def test_a_person_may_hold_only_so_many_tokens(browser, user, monkeypatch):
    monkeypatch.setattr(tokens, "MAX_TOKENS_PER_USER", 2)
    _create(browser, "one"), _create(browser, "two")
    page = browser.post("/account/", {"action": "create", "name": "three"}, follow=True).content.decode()
    assert "revoke one first" in page and ApiToken.objects.filter(owner=user).count() == 2


def test_an_unnamed_token_gets_a_default_name(browser, user):
    browser.post("/account/", {"action": "create", "name": "   "})
    assert ApiToken.objects.get(owner=user).name == "API token"


async def _connects(path: str, headers=()) -> bool:
    communicator = WebsocketCommunicator(application, path, headers=list(headers))
    connected, _ = await communicator.connect(timeout=10)
    if connected:
        await communicator.disconnect()
    return connected


@pytest.mark.django_db(transaction=True)
def test_the_websocket_accepts_a_named_token_and_refuses_a_revoked_one(user):
    token, key = tokens.api_token_create(user=user, name="voice agent")
    assert async_to_sync(_connects)(f"/ws/chat/?token={key}")
    tokens.api_token_revoke(user=user, token_id=token.pk)
    assert not async_to_sync(_connects)("/ws/chat/", [(b"authorization", f"Token {key}".encode())])
