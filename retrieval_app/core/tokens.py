"""A person's API token, managed from the account page.

DRF's token table holds one token per user, and the websocket and every API client already accept it.
So a user has at most one token: issuing one replaces any earlier token (which stops working at once),
revoking deletes it. Its key is shown once, when it is issued; afterwards only its first characters
are shown, enough to recognise it.
"""

from __future__ import annotations

from django.db import transaction
from rest_framework.authtoken.models import Token

SHOWN_CHARS = 6


@transaction.atomic
def api_token_issue(*, user) -> Token:
    """A new token for ``user``; any earlier one is revoked."""
    Token.objects.filter(user=user).delete()
    return Token.objects.create(user=user)


def api_token_revoke(*, user) -> bool:
    """Deletes the user's token; False if there was none."""
    deleted, _ = Token.objects.filter(user=user).delete()
    return bool(deleted)


def api_token_get(*, user) -> Token | None:
    return Token.objects.filter(user=user).first()
