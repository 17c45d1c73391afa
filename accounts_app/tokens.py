"""A person's API tokens, managed from the account page.

A person may hold several named tokens (one per integration or agent), each shown once when it is
created and revocable on its own, and sign-in tokens, which ``POST /api/auth/token`` and
``manage.py drf_create_token`` hand out. Of every kind only a SHA-256 digest of the key is stored, so a
leaked database does not leak working credentials; a key is recognised afterwards by its first
characters.

DRF's own table (``authtoken``) never keeps a key: a row written there (by DRF's command or view, or by
any code that creates a ``Token``) is turned into a sign-in token at once, and the caller still holds
the key it was given.
"""

from __future__ import annotations

import secrets
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.db import transaction
from django.db.models import F
from django.utils import timezone

from accounts_app.credentials import api_key_digest, credentials_changed
from accounts_app.exceptions import TokenLimitReached
from accounts_app.models import ApiToken

SHOWN_CHARS = 10
# Named tokens' keys start with this, so that a person can tell them from sign-in tokens (40 hex digits).
KEY_PREFIX = "rk_"
MAX_TOKENS_PER_USER = 50
# The lifetimes the account page offers for a named token, in days (besides "never").
TOKEN_LIFETIME_DAYS = (7, 30, 90, 365)
# Each sign-in (a script that asks for a token every time it starts, say) makes a new key; beyond this
# many, the least recently used are revoked.
MAX_SIGN_IN_TOKENS_PER_USER = 20
SIGN_IN_TOKEN_NAME = "Sign-in token"  # noqa: S105 (a label, not a secret)


def _lock_user(user) -> None:
    # Locks the user's row so that two concurrent creations cannot both pass a limit.
    get_user_model().objects.select_for_update().filter(pk=user.pk).first()


@transaction.atomic
def api_token_create(*, user, name: str, lifetime: timedelta | None = None) -> tuple[ApiToken, str]:
    """A new named token for ``user`` and its key, which is returned here and never again; with a
    ``lifetime``, it stops working once that has passed (and its open sockets close then)."""
    _lock_user(user)
    if ApiToken.objects.filter(owner=user, kind=ApiToken.Kind.NAMED).count() >= MAX_TOKENS_PER_USER:
        raise TokenLimitReached(f"You already have {MAX_TOKENS_PER_USER} API tokens; revoke one first.")
    key = KEY_PREFIX + secrets.token_hex(20)
    token = ApiToken.objects.create(
        owner=user,
        name=name.strip() or "API token",
        prefix=key[:SHOWN_CHARS],
        key_digest=api_key_digest(key),
        expires_at=timezone.now() + lifetime if lifetime else None,
    )
    return token, key


@transaction.atomic
def sign_in_token_store(*, user, key: str) -> ApiToken:
    """Keeps ``key`` as a sign-in token of ``user`` (its digest only), revoking the least recently used
    sign-in tokens beyond MAX_SIGN_IN_TOKENS_PER_USER."""
    _lock_user(user)
    token, _ = ApiToken.objects.get_or_create(
        key_digest=api_key_digest(key),
        defaults={
            "owner": user,
            "name": SIGN_IN_TOKEN_NAME,
            "prefix": key[:SHOWN_CHARS],
            "kind": ApiToken.Kind.SIGN_IN,
            # Issued by a sign-in, which is its first use: the least recently used are the ones revoked,
            # and its first requests need not stamp it again.
            "last_used_at": timezone.now(),
        },
    )
    kept = ApiToken.objects.filter(owner=user, kind=ApiToken.Kind.SIGN_IN).order_by(
        F("last_used_at").desc(nulls_last=True), "-created_at", "-id"
    )
    stale = list(kept.exclude(pk=token.pk).values_list("pk", flat=True)[MAX_SIGN_IN_TOKENS_PER_USER - 1 :])
    if stale:
        _revoke(ApiToken.objects.filter(pk__in=stale), user_id=user.pk)
    return token


def _revoke(tokens, *, user_id: int) -> int:
    deleted, _ = tokens.delete()
    if deleted:
        credentials_changed(user_id=user_id)
    return deleted


def api_tokens_revoke(*, tokens) -> int:
    """Revokes the tokens of a queryset (the admin's), telling each owner's open sockets."""
    owners = set(tokens.values_list("owner_id", flat=True))
    deleted, _ = tokens.delete()
    for owner_id in owners:
        credentials_changed(user_id=owner_id)
    return deleted


def api_token_revoke(*, user, token_id: int) -> bool:
    """Revokes one of ``user``'s own tokens (of either kind); False if it has no such token."""
    return bool(_revoke(ApiToken.objects.filter(owner=user, pk=token_id), user_id=user.pk))


def sign_in_token_revoke(*, user) -> bool:
    """Revokes every sign-in token of ``user``; the next sign-in at ``/api/auth/token`` makes a new one."""
    return bool(_revoke(ApiToken.objects.filter(owner=user, kind=ApiToken.Kind.SIGN_IN), user_id=user.pk))


def api_tokens_revoke_all(*, user) -> int:
    """Revokes every token of ``user``, named and sign-in; how many there were."""
    return _revoke(ApiToken.objects.filter(owner=user), user_id=user.pk)


def api_tokens_of(*, user) -> list[ApiToken]:
    return list(ApiToken.objects.filter(owner=user).order_by("kind", "-created_at", "-id"))


def named_token_count(*, tokens: list[ApiToken]) -> int:
    return sum(1 for token in tokens if token.kind == ApiToken.Kind.NAMED)


def drf_token_saved(sender, instance, created: bool, raw: bool = False, **kwargs) -> None:
    """A key written to DRF's table (by ``drf_create_token``, say) becomes a sign-in token: its digest is
    kept and its row deleted, so the table never holds a usable key. The caller keeps ``instance.key``."""
    if raw or not created:
        return
    sign_in_token_store(user=instance.user, key=instance.key)
    sender.objects.filter(pk=instance.pk).delete()


def user_saved(sender, instance, created: bool, raw: bool = False, **kwargs) -> None:
    """A new password rotates the person's sign-in tokens (named tokens are the person's to revoke, on
    the account page); a new password or a deactivation makes every open socket check its credential."""
    if raw or created:
        return
    # Set by set_password and cleared by Django before a mere re-hashing of the same password is saved.
    password_changed = getattr(instance, "_password", None) is not None
    if password_changed:
        ApiToken.objects.filter(owner_id=instance.pk, kind=ApiToken.Kind.SIGN_IN).delete()
    if password_changed or not instance.is_active:
        credentials_changed(user_id=instance.pk)


@transaction.atomic
def credentials_revoke_everywhere(*, user, password: str) -> bool:
    """Signs ``user`` out of every browser and revokes all their tokens, once ``password`` proves it is
    them; False (and nothing changed) if it is not their password. The password stays the same: it is
    stored again with a new salt, which changes what every existing session was signed in with."""
    if not user.check_password(password):
        return False
    user.set_password(password)
    user.save(update_fields=["password"])
    api_tokens_revoke_all(user=user)
    return True
