"""The foundation's records: every call to a model, for accounting, and the worker jobs that could not
be handed to the broker, kept until it is back."""

from __future__ import annotations

from django.conf import settings
from django.db import models
from django.utils import timezone


class ModelCall(models.Model):
    """One call to a model (embedding or text generation): what it was for, its tokens, cost and time."""

    class Kind(models.TextChoices):
        EMBEDDING = "embedding", "embedding"
        GENERATION = "generation", "generation"

    kind = models.CharField(max_length=16, choices=Kind.choices)
    purpose = models.CharField(max_length=64, help_text="What the call served, e.g. archive_overview.")
    backend = models.CharField(max_length=32, help_text="local, extractive or litellm")
    model = models.CharField(max_length=200)
    owner = models.ForeignKey(
        settings.AUTH_USER_MODEL, null=True, blank=True, on_delete=models.SET_NULL, related_name="model_calls"
    )
    # The conversation the call served, when it served one (a chat turn, a commit, a summary). Kept when
    # the conversation is deleted: the call was made and paid for all the same.
    # An id, not a foreign key: the foundation knows no app above it. Cleared when the conversation is
    # deleted (``model_calls_forget_session``).
    session_id = models.UUIDField(null=True, blank=True, db_index=True)
    input_count = models.PositiveIntegerField(default=1, help_text="Texts embedded, or 1 for a generation.")
    input_tokens = models.PositiveIntegerField(default=0)
    output_tokens = models.PositiveIntegerField(default=0)
    cost_usd = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    latency_ms = models.FloatField(default=0.0)
    attempts = models.PositiveSmallIntegerField(default=1)
    ok = models.BooleanField(default=True)
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        # The table keeps the name it was created with, so moving the model rewrote no data.
        db_table = "retrieval_app_modelcall"
        indexes = [
            models.Index(fields=["purpose", "-created_at"], name="modelcall_purpose_idx"),
            models.Index(fields=["owner", "-created_at"], name="modelcall_owner_created_idx"),
            models.Index(fields=["-created_at"], name="modelcall_failed_created_idx", condition=models.Q(ok=False)),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.model} for {self.purpose}"


class QueuedTask(models.Model):
    """A worker job that could not be handed to the broker (Redis down): kept here, in the database the
    request wrote to anyway, until a worker's sweep sends it (``foundation.queues``)."""

    task = models.CharField(max_length=200)
    args = models.JSONField(default=list)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        db_table = "retrieval_app_queuedtask"

    def __str__(self) -> str:
        return f"{self.task}{tuple(self.args)}"
