"""A person's API tokens, managed from the account page.

A person may hold several named tokens (one per integration or agent), each shown once when it is
created and revocable on its own. Only a SHA-256 digest of a key is stored, so a leaked database
does not leak working credentials; a key is recognised afterwards by its first characters.

``POST /api/auth/token`` still answers with the sign-in token kept in DRF's own table (one per
user, created on first sign-in), and every client that holds one keeps working: authentication
accepts either kind.
"""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy as _
from rest_framework import exceptions
from rest_framework.authentication import TokenAuthentication
from rest_framework.authtoken.models import Token

from retrieval_app.exceptions import TokenLimitReached
from retrieval_app.models import ApiToken

SHOWN_CHARS = 10
# Named tokens' keys start with this, so one lookup finds any key: a key without it can only be a
# sign-in token.
KEY_PREFIX = "rk_"
MAX_TOKENS_PER_USER = 50
# A token's "last used" is refreshed at most this often: one write per request would double the
# cost of the cheapest API calls.
LAST_USED_RESOLUTION = timedelta(minutes=1)


def api_key_digest(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8", "surrogatepass")).hexdigest()


@transaction.atomic
def api_token_create(*, user, name: str) -> tuple[ApiToken, str]:
    """A new named token for ``user`` and its key, which is returned here and never again."""
    # Locks the user's row so that two concurrent creations cannot both pass the limit.
    get_user_model().objects.select_for_update().filter(pk=user.pk).first()
    if ApiToken.objects.filter(owner=user).count() >= MAX_TOKENS_PER_USER:
        raise TokenLimitReached(f"You already have {MAX_TOKENS_PER_USER} API tokens; revoke one first.")
    key = KEY_PREFIX + secrets.token_hex(20)
    token = ApiToken.objects.create(
        owner=user, name=name.strip() or "API token", prefix=key[:SHOWN_CHARS], key_digest=api_key_digest(key)
    )
    return token, key


def api_token_revoke(*, user, token_id: int) -> bool:
    """Revokes one of ``user``'s own tokens; False if it has no such token."""
    deleted, _ = ApiToken.objects.filter(owner=user, pk=token_id).delete()
    return bool(deleted)


def sign_in_token_revoke(*, user) -> bool:
    """Revokes the token ``POST /api/auth/token`` hands out; the next sign-in there creates a new one."""
    deleted, _ = Token.objects.filter(user=user).delete()
    return bool(deleted)


def api_tokens_of(*, user) -> list[ApiToken]:
    return list(ApiToken.objects.filter(owner=user).order_by("-created_at", "-id"))


def sign_in_token_of(*, user) -> Token | None:
    return Token.objects.filter(user=user).first()


def user_for_api_key(key: str):
    """The active user a key belongs to (a named token's or the sign-in token's), or None."""
    if not key or len(key) > 64:
        return None
    if key.startswith(KEY_PREFIX):
        token = ApiToken.objects.select_related("owner").filter(key_digest=api_key_digest(key)).first()
        if token is None:
            return None
        now = timezone.now()
        if token.last_used_at is None or token.last_used_at < now - LAST_USED_RESOLUTION:
            ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        user = token.owner
    else:
        sign_in = Token.objects.select_related("user").filter(key=key).first()
        user = sign_in.user if sign_in else None
    return user if user is not None and user.is_active else None


class ApiTokenAuthentication(TokenAuthentication):
    """``Authorization: Token <key>`` with a named token or the sign-in token."""

    def authenticate_credentials(self, key):
        user = user_for_api_key(key)
        if user is None:
            raise exceptions.AuthenticationFailed(_("Invalid token."))
        return (user, None)
