"""What the operators' page and the join page read about invitations and requests."""

from __future__ import annotations

from django.db.models import QuerySet

from accounts_app.exceptions import InvitationUnusable
from accounts_app.keys import key_digest
from accounts_app.models import AccountRequest, Invitation

RECENT_ROWS = 100


def invitation_list() -> QuerySet[Invitation]:
    """The newest invitations, with who made them and who used them."""
    return Invitation.objects.select_related("created_by", "used_by")[:RECENT_ROWS]


def invitation_for_key(*, key: str) -> Invitation:
    """The open invitation a link's key names; any other is refused alike (used, withdrawn, expired)."""
    invitation = Invitation.objects.filter(key_digest=key_digest(key)).first()
    if invitation is None or invitation.status != "open":
        raise InvitationUnusable
    return invitation


def account_request_pending() -> QuerySet[AccountRequest]:
    return AccountRequest.objects.filter(status=AccountRequest.Status.PENDING).order_by("created_at")


def account_request_decided() -> QuerySet[AccountRequest]:
    return (
        AccountRequest.objects.exclude(status=AccountRequest.Status.PENDING)
        .select_related("decided_by", "user")
        .order_by("-decided_at")[:RECENT_ROWS]
    )
