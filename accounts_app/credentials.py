"""One answer, everywhere, to "is this credential still good?".

A request or a socket is signed in by a credential: an API key (a named token or a sign-in token) or a
browser session. REST asks when each request arrives; a websocket before each turn and whenever its user's
credentials change; a server-sent events stream every ``STREAM_CHECK_INTERVAL_S`` while it streams. All of
them ask ``credential_user``, which checks what really ends a credential: the token was revoked or has
expired, the person was deactivated, the session ended, or the password changed since the session signed in (its
auth hash no longer matches).

Whatever ends a credential announces it (``credentials_changed`` to the user's open sockets, see
``foundation.push``), so that open sockets check at once rather than at their next turn.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime, timedelta
from importlib import import_module

from django.conf import settings
from django.contrib.auth import HASH_SESSION_KEY, SESSION_KEY, get_user_model
from django.utils import timezone
from django.utils.crypto import constant_time_compare
from django.utils.translation import gettext_lazy as _
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.plumbing import build_bearer_security_scheme_object
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication

from accounts_app.models import ApiToken
from foundation.db import release_database_connections
from foundation.push import push_on_commit
from foundation.security import token_guess_allowed, token_guess_failed

# Pushed to a user's sockets when one of their credentials may have ended; each socket checks its own.
CREDENTIALS_CHANGED_EVENT = "credentials_changed"
# How often an open server-sent events stream checks that its credential still holds.
STREAM_CHECK_INTERVAL_S = 1.0
# What a socket or a stream is told as it is closed because its credential ended.
SIGNED_OUT_CODE = "signed_out"
SIGNED_OUT_MESSAGE = "You are signed out. Sign in again to go on."
# No key is longer: a longer value is refused without a lookup.
MAX_KEY_CHARS = 64
# A token's "last used" is refreshed at most this often: one write per request would double the
# cost of the cheapest API calls.
LAST_USED_RESOLUTION = timedelta(minutes=1)


def api_key_digest(key: str) -> str:
    """What is stored of a key (of any kind): its SHA-256, in hex."""
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass(frozen=True)
class Credential:
    """What signed a request or a socket in: a token (``token_id``) or a browser session (``session_key``)."""

    user_id: int
    token_id: int | None = None
    session_key: str | None = None
    expires_at: datetime | None = None  # a token's end, if it has one: a socket closes itself then


def credential_for_key(key: str):
    """``(user, credential)`` for an API key that is good now, or None."""
    if not key or len(key) > MAX_KEY_CHARS:
        return None
    token = ApiToken.objects.select_related("owner").filter(key_digest=api_key_digest(key)).first()
    now = timezone.now()
    if token is None or not _token_holds(token, now=now):
        return None
    if token.last_used_at is None or token.last_used_at < now - LAST_USED_RESOLUTION:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
    return token.owner, Credential(user_id=token.owner_id, token_id=token.pk, expires_at=token.expires_at)


def _token_holds(token: ApiToken, *, now: datetime) -> bool:
    return token.owner.is_active and (token.expires_at is None or token.expires_at > now)


def credential_for_session(*, user, session_key: str | None) -> Credential | None:
    """The credential of a browser session that signed ``user`` in (None without a session)."""
    if not session_key or user is None or not user.is_authenticated:
        return None
    return Credential(user_id=user.pk, session_key=session_key)


def credential_user(credential: Credential):
    """The active user ``credential`` still signs in, or None once it has ended."""
    if credential.token_id is not None:
        token = ApiToken.objects.select_related("owner").filter(pk=credential.token_id).first()
        if token is None or token.owner_id != credential.user_id:
            return None
        return token.owner if _token_holds(token, now=timezone.now()) else None
    if credential.session_key:
        return _session_user(credential)
    return None


def _session_user(credential: Credential):
    store = import_module(settings.SESSION_ENGINE).SessionStore(session_key=credential.session_key)
    if store.get(SESSION_KEY) != str(credential.user_id):
        return None  # signed out, expired, or another user's session now
    user = get_user_model().objects.filter(pk=credential.user_id, is_active=True).first()
    if user is None:
        return None
    stored = store.get(HASH_SESSION_KEY) or ""
    # Django's own test (django.contrib.auth.get_user): the hash is made from the password, so a new
    # password ends every session made with the old one; SECRET_KEY_FALLBACKS keep a key rotation smooth.
    expected = [user.get_session_auth_hash()] + [
        user._get_session_auth_hash(secret=secret) for secret in settings.SECRET_KEY_FALLBACKS
    ]
    return user if any(constant_time_compare(stored, value) for value in expected) else None


def credential_holds(credential: Credential | None) -> bool:
    """``credential_user`` for a long-lived socket or stream, which then gives its database connection
    back: it may sit idle for hours before it checks again."""
    if credential is None:
        return False
    try:
        return credential_user(credential) is not None
    finally:
        release_database_connections()


def credentials_changed(*, user_id: int) -> None:
    """Tells ``user_id``'s open sockets, once the current transaction commits, to check their credential."""
    push_on_commit(user_id, CREDENTIALS_CHANGED_EVENT, dict)


class ApiTokenAuthentication(TokenAuthentication):
    """``Authorization: Token <key>`` with a named token or a sign-in token; ``request.auth`` is its
    ``Credential``, which a stream checks again while it lasts."""

    def authenticate_credentials(self, key):
        found = credential_for_key(key)
        if found is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        return found


class BearerTokenAuthentication(ApiTokenAuthentication):
    """The same keys as ``Authorization: Bearer <key>``, the way OpenAI's and MCP's clients (and most
    SDKs) send one."""

    keyword = "Bearer"


class BearerTokenScheme(OpenApiAuthenticationExtension):
    """The schema names the ``Bearer`` way of sending a key apart from the ``Token`` way: both are
    subclasses of DRF's token authentication, which the schema would otherwise name alike."""

    target_class = BearerTokenAuthentication
    name = "bearerAuth"

    def get_security_definition(self, auto_schema):
        return build_bearer_security_scheme_object(header_name="Authorization", token_prefix=self.target.keyword)


# What ``credential_for_guessed_key`` answers for an address that sent too many wrong keys.
KEY_GUESSES_THROTTLED = "throttled"


def credential_for_guessed_key(*, key: str, address: str):
    """The credential a key sent from a client address names (as ``credential_for_key``); None for a wrong
    key, which counts against the address; KEY_GUESSES_THROTTLED, looking nothing up, once the address sent
    too many wrong keys. For doors that take a key with no request of DRF's around it (the websocket, the
    MCP server). Its database connections go back at once: the caller may then idle for hours."""
    if not token_guess_allowed(address):
        return KEY_GUESSES_THROTTLED
    try:
        found = credential_for_key(key)
    finally:
        release_database_connections()
    if found is None:
        token_guess_failed(address)
    return found
