"""People's access: one-time invitations staff hand out, requests for an account staff decide on, and
the API tokens people hold.

None keeps a secret in the clear: an invitation's link carries a key of which only a digest is
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


class ApiToken(models.Model):
    """An API token of one person (``accounts_app.tokens``): only a digest of its key is kept;
    the key itself is shown once, when the token is created. A named token is made on the account page;
    a sign-in token by ``POST /api/auth/token`` or ``manage.py drf_create_token``."""

    class Kind(models.TextChoices):
        NAMED = "named", "named"
        SIGN_IN = "sign_in", "sign-in"

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, help_text="What the person uses it for, e.g. the agent's name.")
    prefix = models.CharField(max_length=16, help_text="The key's first characters, to recognise it by.")
    key_digest = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the key, in hex.")
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.NAMED)
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)
    expires_at = models.DateTimeField(null=True, blank=True, help_text="When the token stops working (never if empty).")

    class Meta:
        # The table keeps the name it was created with, so moving the model rewrote no data.
        db_table = "retrieval_app_apitoken"
        indexes = [models.Index(fields=["owner", "-created_at"], name="apitoken_owner_created_idx")]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"
