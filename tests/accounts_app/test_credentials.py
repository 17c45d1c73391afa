"""One credential check for REST, the websocket and the event stream: sign-in tokens kept as digests (no
table and no admin page holds a usable key), a new password rotates them, the account page revokes all
tokens and signs out everywhere, and password and token guesses are throttled."""

from __future__ import annotations

import importlib
import json
from datetime import timedelta
from io import StringIO

import pytest
import time_machine
from asgiref.sync import async_to_sync
from channels.testing import WebsocketCommunicator
from django.contrib.auth.hashers import make_password
from django.core.cache import cache
from django.core.management import call_command
from django.db import connection
from django.db.migrations.loader import MigrationLoader
from django.test import Client
from django.utils import timezone
from rest_framework.authtoken.models import Token

from accounts_app import credentials, tokens
from accounts_app.models import ApiToken
from config.asgi import application
from tests.factories import UserFactory

pytestmark = pytest.mark.django_db

PASSWORD = "correct horse battery staple"
# How long before its end a socket opens on an expiring token (its close is due this long after).
EXPIRY_NOTICE = timedelta(seconds=1)


@pytest.fixture(autouse=True)
def _fresh_throttles():
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def person():
    user = UserFactory()
    user.set_password(PASSWORD)
    user.save()
    return user


def _status(key: str) -> int:
    return Client(headers={"Authorization": f"Token {key}"}).get("/api/sessions").status_code


def _sign_in_key(user) -> str:
    answer = Client().post(
        "/api/auth/token", {"username": user.username, "password": PASSWORD}, content_type="application/json"
    )
    assert answer.status_code == 200, answer.content
    return answer.json()["token"]


def test_the_sign_in_token_is_shown_once_and_stored_as_a_digest(person):
    key = _sign_in_key(person)
    assert _status(key) == 200
    assert not Token.objects.exists(), "DRF's table never keeps a key"
    stored = ApiToken.objects.get(owner=person)
    assert stored.kind == ApiToken.Kind.SIGN_IN and stored.key_digest == credentials.api_key_digest(key)
    assert key not in json.dumps(list(ApiToken.objects.values()), default=str)
    # A second sign-in gets a new key; the first keeps working for the clients that hold it.
    again = _sign_in_key(person)
    assert again != key and _status(key) == 200 and _status(again) == 200


def test_a_token_made_by_drf_create_token_works_and_leaves_no_key_behind(person):
    out = StringIO()
    call_command("drf_create_token", person.username, stdout=out)
    key = out.getvalue().split("Generated token ", 1)[1].split(" ", 1)[0]
    assert _status(key) == 200 and not Token.objects.exists()


def test_existing_sign_in_keys_are_migrated_to_digests_and_keep_working(person):
    migration = importlib.import_module("retrieval_app.migrations.0006_sign_in_tokens_as_digests")
    legacy = "0123456789abcdef0123456789abcdef01234567"
    Token.objects.bulk_create([Token(key=legacy, user=person)])  # a row from before (no signal runs)
    # The models as that migration saw them: the token table belonged to retrieval_app then.
    state = MigrationLoader(connection).project_state(("retrieval_app", "0006_sign_in_tokens_as_digests"))
    migration.keys_to_digests(state.apps, None)
    assert not Token.objects.exists()
    assert _status(legacy) == 200
    assert ApiToken.objects.get(owner=person).prefix == legacy[: tokens.SHOWN_CHARS]


def test_no_admin_page_lists_a_usable_key(person):
    key = _sign_in_key(person)
    named, named_key = tokens.api_token_create(user=person, name="agent")
    staff = Client()
    staff.force_login(UserFactory(is_staff=True, is_superuser=True))
    assert staff.get("/admin/authtoken/tokenproxy/").status_code == 404
    listing = staff.get("/admin/accounts_app/apitoken/").content.decode()
    assert "agent" in listing and named.prefix in listing
    assert key not in listing and named_key not in listing
    page = staff.get(f"/admin/accounts_app/apitoken/{named.pk}/change/").content.decode()
    assert named_key not in page and named.key_digest not in page


def test_revoking_a_token_in_the_admin_ends_it(person):
    token, key = tokens.api_token_create(user=person, name="agent")
    staff = Client()
    staff.force_login(UserFactory(is_staff=True, is_superuser=True))
    staff.post(f"/admin/accounts_app/apitoken/{token.pk}/delete/", {"post": "yes"})
    assert _status(key) == 401


@pytest.fixture
def browser(person):
    client = Client()
    client.force_login(person)
    return client


def _change_password(browser: Client, old: str, **extra) -> int:
    new = "a different long passphrase"
    data = {"old_password": old, "new_password1": new, "new_password2": new, **extra}
    return browser.post("/account/password/", data).status_code


def test_a_new_password_rotates_the_sign_in_tokens_and_ends_other_sessions(person, browser):
    sign_in = _sign_in_key(person)
    _, named = tokens.api_token_create(user=person, name="backup")
    elsewhere = Client()
    elsewhere.force_login(person)
    assert _change_password(browser, PASSWORD) == 302
    assert _status(sign_in) == 401
    assert _status(named) == 200, "named tokens are revoked only when asked"
    assert elsewhere.get("/api/sessions").status_code in (401, 403)
    assert browser.get("/api/sessions").status_code == 200, "the browser that changed it stays signed in"


def test_a_new_password_may_revoke_every_token(person, browser):
    _, named = tokens.api_token_create(user=person, name="backup")
    assert _change_password(browser, PASSWORD, revoke_tokens="1") == 302
    assert _status(named) == 401 and not ApiToken.objects.filter(owner=person).exists()


def test_re_hashing_the_same_password_at_sign_in_is_no_password_change(person, settings):
    settings.PASSWORD_HASHERS = [
        "django.contrib.auth.hashers.PBKDF2PasswordHasher",
        "django.contrib.auth.hashers.MD5PasswordHasher",
    ]
    person.__class__.objects.filter(pk=person.pk).update(password=make_password(PASSWORD, hasher="md5"))
    key = _sign_in_key(person)  # signing in upgrades the stored hash to the preferred hasher
    assert person.__class__.objects.get(pk=person.pk).password.startswith("pbkdf2_sha256$")
    assert _status(key) == 200


def test_signing_out_everywhere_asks_the_password_and_ends_everything_else(person, browser):
    key = _sign_in_key(person)
    _, named = tokens.api_token_create(user=person, name="phone")
    elsewhere = Client()
    elsewhere.force_login(person)
    wrong = browser.post("/account/", {"action": "sign-out-everywhere", "password": "nope"}, follow=True)
    assert "not your password" in wrong.content.decode() and _status(named) == 200
    done = browser.post("/account/", {"action": "sign-out-everywhere", "password": PASSWORD}, follow=True)
    assert "signed out everywhere else" in done.content.decode()
    assert _status(key) == 401 and _status(named) == 401
    assert elsewhere.get("/api/sessions").status_code in (401, 403)
    assert browser.get("/api/sessions").status_code == 200
    assert person.__class__.objects.get(pk=person.pk).check_password(PASSWORD), "the password is unchanged"


def test_revoke_all_on_the_account_page(person, browser):
    keys = [_sign_in_key(person), tokens.api_token_create(user=person, name="a")[1]]
    page = browser.post("/account/", {"action": "revoke-all"}, follow=True).content.decode()
    assert "2 tokens revoked" in page and [_status(key) for key in keys] == [401, 401]


def test_old_password_guesses_are_throttled(person, browser):
    answers = [_change_password(browser, f"guess {attempt}") for attempt in range(25)]
    assert answers[:20] == [200] * 20 and set(answers[20:]) == {429}
    assert _change_password(browser, PASSWORD) == 429, "not even the right one, until the period passes"


def test_signing_out_everywhere_is_throttled_like_a_password_change(person, browser):
    for _ in range(20):
        browser.post("/account/", {"action": "sign-out-everywhere", "password": "nope"})
    refused = browser.post("/account/", {"action": "sign-out-everywhere", "password": PASSWORD})
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0


async def _answer_of(key: str) -> dict | None:
    """What a socket opened with ``key`` answers a ping (None: its handshake was refused)."""
    communicator = WebsocketCommunicator(application, f"/ws/chat/?token={key}")
    connected, _ = await communicator.connect(timeout=10)
    if not connected:
        return None
    await communicator.send_to(text_data=json.dumps({"type": "ping"}))
    frame = json.loads(await communicator.receive_from(timeout=5))
    if frame.get("code") == "throttled":
        frame["closed"] = (await communicator.receive_output(timeout=5))["code"]
    await communicator.disconnect()
    return frame


@pytest.mark.django_db(transaction=True)
def test_websocket_token_guesses_are_throttled_per_address(person, settings):
    rates = settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]
    settings.REST_FRAMEWORK = {**settings.REST_FRAMEWORK, "DEFAULT_THROTTLE_RATES": {**rates, "ws_token": "20/min"}}
    _, key = tokens.api_token_create(user=person, name="agent")
    assert async_to_sync(_answer_of)(key) == {"type": "pong"}
    guesses = [async_to_sync(_answer_of)(f"rk_{attempt:040d}") for attempt in range(20)]
    assert guesses == [None] * 20
    refused = async_to_sync(_answer_of)(key)  # after 20 wrong keys, none is looked up until the period ends
    assert refused["code"] == "throttled" and refused["details"]["retry_after"] == 60 and refused["closed"] == 4429
    cache.clear()
    assert async_to_sync(_answer_of)(key) == {"type": "pong"}


def test_the_credential_check_follows_each_way_a_credential_ends(person):
    token, key = tokens.api_token_create(user=person, name="agent")
    user, credential = credentials.credential_for_key(key)
    assert user == person and credentials.credential_user(credential) == person
    person.is_active = False
    person.save()
    assert credentials.credential_user(credential) is None
    person.is_active = True
    person.save()
    tokens.api_token_revoke(user=person, token_id=token.pk)
    assert credentials.credential_user(credential) is None
    assert credentials.credential_for_key("x" * 65) is None


def test_a_token_may_expire_and_then_stops_working(person, browser):
    browser.post("/account/", {"action": "create", "name": "trial agent", "lifetime_days": "30"})
    token = ApiToken.objects.get(owner=person, name="trial agent")
    assert timedelta(days=29) < token.expires_at - timezone.now() <= timedelta(days=30)
    key = tokens.api_token_create(user=person, name="short")[1]
    assert _status(key) == 200
    ApiToken.objects.filter(name="short").update(expires_at=timezone.now() - timedelta(seconds=1))
    assert _status(key) == 401
    assert "expired" in browser.get("/account/").content.decode()
    # An unknown lifetime is never a token that lives forever by mistake of the form: it is "never".
    browser.post("/account/", {"action": "create", "name": "odd", "lifetime_days": "12345"})
    assert ApiToken.objects.get(name="odd").expires_at is None


@pytest.mark.django_db(transaction=True)
def test_a_socket_closes_itself_when_its_token_expires(person):
    _, key = tokens.api_token_create(user=person, name="month", lifetime=timedelta(days=30))
    expires_at = ApiToken.objects.get(name="month").expires_at

    async def run():
        # The clock stands still just before the month ends, so however slow the connection is the token
        # is still valid; then it moves past the end while the socket is open.
        with time_machine.travel(expires_at - EXPIRY_NOTICE, tick=False) as clock:
            communicator = WebsocketCommunicator(application, f"/ws/chat/?token={key}")
            connected, _ = await communicator.connect(timeout=10)
            assert connected
            await communicator.send_to(text_data=json.dumps({"type": "ping"}))
            pong = json.loads(await communicator.receive_from(timeout=5))
            clock.shift(2 * EXPIRY_NOTICE)
            frame = json.loads(await communicator.receive_from(timeout=5))
            closed = await communicator.receive_output(timeout=5)
        return pong, frame, closed

    pong, frame, closed = async_to_sync(run)()
    assert pong == {"type": "pong"} and frame["code"] == "signed_out" and closed["code"] == 4401
