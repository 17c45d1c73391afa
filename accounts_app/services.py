"""People join as the operator allows: staff make and withdraw one-time invitations, an invited person
makes an ordinary account with one, and (SIGN_UP_MODE=approval) staff approve or refuse requests."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth import get_user_model
from django.contrib.auth.base_user import AbstractBaseUser
from django.contrib.auth.hashers import make_password
from django.db import IntegrityError, transaction
from django.utils import timezone

from accounts_app.exceptions import (
    InvalidInvitation,
    InvitationUnusable,
    RequestAlreadyDecided,
    TooManyPendingRequests,
    UsernameTaken,
)
from accounts_app.keys import PREFIX_CHARS, key_digest, key_new
from accounts_app.models import AccountRequest, Invitation

INVITATION_MAX_DAYS = 30
# Requests waiting for a decision beyond this many are turned away (the sign-up form is open to anyone).
MAX_PENDING_REQUESTS = 200


@dataclass(frozen=True)
class NewInvitation:
    invitation: Invitation
    key: str  # shown once, in the link; only its digest is kept


def invitation_create(*, created_by: AbstractBaseUser, days: int, note: str = "") -> NewInvitation:
    if not 1 <= days <= INVITATION_MAX_DAYS:
        raise InvalidInvitation(f"An invitation lasts from 1 to {INVITATION_MAX_DAYS} days.")
    key = key_new()
    invitation = Invitation.objects.create(
        key_digest=key_digest(key),
        prefix=key[:PREFIX_CHARS],
        note=note.strip(),
        created_by=created_by,
        expires_at=timezone.now() + timedelta(days=days),
    )
    return NewInvitation(invitation=invitation, key=key)


def invitation_revoke(*, invitation_id) -> Invitation:
    """Withdraws an invitation not yet used; one used already stays as it was (its account is the user's)."""
    with transaction.atomic():
        invitation = Invitation.objects.select_for_update().filter(pk=invitation_id).first()
        if invitation is None:
            raise InvitationUnusable("No such invitation.")
        if invitation.used_at is None and invitation.revoked_at is None:
            invitation.revoked_at = timezone.now()
            invitation.save(update_fields=["revoked_at"])
    return invitation


def invitation_accept(*, key: str, username: str, password: str) -> AbstractBaseUser:
    """Makes the invited person's account (never staff) and spends the invitation, in one transaction:
    two people racing with the same link make one account between them."""
    with transaction.atomic():
        invitation = _usable_invitation(key, lock=True)
        user = _user_create(username=username, password=make_password(password))
        invitation.used_at = timezone.now()
        invitation.used_by = user
        invitation.save(update_fields=["used_at", "used_by"])
    return user


def _usable_invitation(key: str, *, lock: bool = False) -> Invitation:
    rows = Invitation.objects.select_for_update() if lock else Invitation.objects
    invitation = rows.filter(key_digest=key_digest(key)).first()
    if invitation is None or invitation.status != "open":
        raise InvitationUnusable
    return invitation


def _user_create(*, username: str, password: str) -> AbstractBaseUser:
    """An ordinary, active account from an already hashed password."""
    user_model = get_user_model()
    if user_model.objects.filter(username__iexact=username).exists():
        raise UsernameTaken
    try:
        with transaction.atomic():
            return user_model.objects.create(username=username, password=password, is_staff=False)
    except IntegrityError as exc:  # the same name made a moment ago
        raise UsernameTaken from exc


def account_request_create(*, username: str, password: str, note: str = "") -> AccountRequest | None:
    """Records a request for an account. A name that is taken (by an account or a pending request) is
    not recorded, and the caller answers exactly as for one that was, so the form tells no one which
    names exist. The password is hashed in either case, so the answer takes as long."""
    hashed = make_password(password)
    with transaction.atomic():
        if AccountRequest.objects.filter(status=AccountRequest.Status.PENDING).count() >= MAX_PENDING_REQUESTS:
            raise TooManyPendingRequests
        taken = (
            get_user_model().objects.filter(username__iexact=username).exists()
            or AccountRequest.objects.filter(status=AccountRequest.Status.PENDING, username__iexact=username).exists()
        )
        if taken:
            return None
        return AccountRequest.objects.create(username=username, password=hashed, note=note.strip())


def account_request_approve(*, request_id, decided_by: AbstractBaseUser) -> AccountRequest:
    """Makes the requested account, an ordinary one, with the password chosen in the request."""
    with transaction.atomic():
        request = _pending_request(request_id)
        request.user = _user_create(username=request.username, password=request.password)
        request.password = ""  # the account holds it now
        _decide(request, AccountRequest.Status.APPROVED, decided_by)
    return request


def account_request_refuse(*, request_id, decided_by: AbstractBaseUser) -> AccountRequest:
    with transaction.atomic():
        request = _pending_request(request_id)
        request.password = ""  # nothing to sign in with is kept for a refused request
        _decide(request, AccountRequest.Status.REFUSED, decided_by)
    return request


def _pending_request(request_id) -> AccountRequest:
    request = AccountRequest.objects.select_for_update().filter(pk=request_id).first()
    if request is None:
        raise RequestAlreadyDecided("No such request.")
    if request.status != AccountRequest.Status.PENDING:
        raise RequestAlreadyDecided
    return request


def _decide(request: AccountRequest, status: str, decided_by: AbstractBaseUser) -> None:
    request.status = status
    request.decided_at = timezone.now()
    request.decided_by = decided_by
    request.save(update_fields=["status", "decided_at", "decided_by", "user", "password"])
