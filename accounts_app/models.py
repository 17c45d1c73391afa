"""How people join: one-time invitations staff hand out, and requests for an account staff decide on.

Neither keeps a secret in the clear: an invitation's link carries a key of which only a digest is
stored, and a request keeps its password already hashed, as the account it becomes will."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone

NOTE_MAX_CHARS = 200


class Invitation(models.Model):
    """A link that lets one person make an ordinary account, once, before it expires."""

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    key_digest = models.CharField(max_length=64, unique=True, editable=False)
    # The key's first characters, shown beside the invitation so staff can tell links apart.
    prefix = models.CharField(max_length=12, editable=False)
    note = models.CharField(max_length=NOTE_MAX_CHARS, blank=True, help_text="Whom it is for: a name, an email.")
    created_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, on_delete=models.SET_NULL, related_name="invitations_sent"
    )
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()
    revoked_at = models.DateTimeField(null=True, blank=True)
    used_at = models.DateTimeField(null=True, blank=True)
    used_by = models.OneToOneField(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="invitation"
    )

    class Meta:
        ordering = ["-created_at"]

    def __str__(self) -> str:
        return f"{self.prefix}… {self.note}".strip()

    @property
    def status(self) -> str:
        if self.used_at:
            return "used"
        if self.revoked_at:
            return "revoked"
        if self.expires_at <= timezone.now():
            return "expired"
        return "open"


class AccountRequest(models.Model):
    """A person asking for an account (SIGN_UP_MODE=approval). No account exists until staff approve."""

    class Status(models.TextChoices):
        PENDING = "pending"
        APPROVED = "approved"
        REFUSED = "refused"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    username = models.CharField(max_length=150)
    password = models.CharField(max_length=128, editable=False)  # hashed, as User.password
    note = models.CharField(max_length=NOTE_MAX_CHARS, blank=True)
    status = models.CharField(max_length=10, choices=Status.choices, default=Status.PENDING)
    created_at = models.DateTimeField(default=timezone.now)
    decided_at = models.DateTimeField(null=True, blank=True)
    decided_by = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="requests_decided"
    )
    user = models.OneToOneField(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="account_request"
    )

    class Meta:
        ordering = ["-created_at"]
        indexes = [models.Index(fields=["status", "-created_at"])]

    def __str__(self) -> str:
        return f"{self.username} ({self.status})"
