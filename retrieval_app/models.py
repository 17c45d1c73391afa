"""Retrieval's own records: the trace of every search, kept for debugging and the admin; the worker
jobs that could not be handed to the broker, kept until it is back; and people's API tokens."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.contrib.postgres.fields import ArrayField
from django.contrib.postgres.indexes import GinIndex
from django.db import models
from django.utils import timezone


class SearchTrace(models.Model):
    """What one find() or search() did: the query and its rewrite, the plan, every stage's
    candidates with their scores, what thresholds and budgets cut, and per-stage timings."""

    class Kind(models.TextChoices):
        FIND = "find", "find"
        SEARCH = "search", "search"
        CHAT = "chat", "chat"
        RECALL = "recall", "recall"

    class Outcome(models.TextChoices):
        OK = "ok", "ok"
        # The search failed, so the turn was answered without context (the answer's retrieval_error).
        RETRIEVAL_FAILED = "retrieval_failed", "retrieval failed"
        # The turn could not be prepared at all; the user's message was kept.
        PREPARE_FAILED = "prepare_failed", "preparation failed"
        # The model failed; the answer is missing or partial.
        GENERATION_FAILED = "generation_failed", "generation failed"
        CANCELLED = "cancelled", "cancelled"
        DISCONNECTED = "disconnected", "client went away"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="search_traces")
    session = models.ForeignKey(
        "sessions_app.ChatSession", null=True, blank=True, on_delete=models.CASCADE, related_name="search_traces"
    )
    kind = models.CharField(max_length=16, choices=Kind.choices, default=Kind.FIND)
    query = models.TextField()
    rewritten_query = models.TextField(blank=True, default="")
    # {"rewritten": bool, "reason": str, "signals": [...], "method": "llm" | "working_set" | ""}
    rewrite_decision = models.JSONField(default=dict, blank=True)
    target_uri = models.CharField(max_length=512, blank=True, default="")
    plan = models.JSONField(default=dict, blank=True)
    # [{"stage": "dense", "candidates": [{"uri", "score", ...}], "cut": [...], "ms": 1.2}, ...]
    stages = models.JSONField(default=list, blank=True)
    # The documents this trace mentions, so that deleting a document can remove its references.
    document_ids = ArrayField(models.UUIDField(), default=list, blank=True)
    result_count = models.PositiveIntegerField(default=0)
    # What was returned, best first: [{"uri", "kind", "title", "score", "source", "doc_id", "session_id"}].
    results = models.JSONField(default=list, blank=True)
    total_ms = models.FloatField(default=0.0)
    # Milliseconds per stage ({"dense": 3.1, "first_token": 412.0, ...}; core.tracing.TIMED_STAGES), kept
    # apart from ``stages`` so that the dashboard's percentiles never read the candidates' lists.
    timings = models.JSONField(default=dict, blank=True)
    outcome = models.CharField(max_length=32, choices=Outcome.choices, default=Outcome.OK)
    error = models.TextField(blank=True, default="")
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        indexes = [
            models.Index(fields=["owner", "-created_at"], name="trace_owner_created_idx"),
            models.Index(fields=["session", "-created_at"], name="trace_session_created_idx"),
            GinIndex(fields=["document_ids"], name="trace_document_ids_gin"),
            # The dashboard's latest failures, without walking past the many traces that went well.
            models.Index(fields=["-created_at"], name="trace_failed_created_idx", condition=~models.Q(outcome="ok")),
        ]

    def __str__(self) -> str:
        return f"{self.kind}: {self.query[:60]}"


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
    session = models.ForeignKey(
        "sessions_app.ChatSession", null=True, blank=True, on_delete=models.SET_NULL, related_name="model_calls"
    )
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
        indexes = [
            models.Index(fields=["purpose", "-created_at"], name="modelcall_purpose_idx"),
            models.Index(fields=["owner", "-created_at"], name="modelcall_owner_created_idx"),
            models.Index(fields=["-created_at"], name="modelcall_failed_created_idx", condition=models.Q(ok=False)),
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.model} for {self.purpose}"


class QueuedTask(models.Model):
    """A worker job that could not be handed to the broker (Redis down): kept here, in the database the
    request wrote to anyway, until a worker's sweep sends it (``retrieval_app.core.queues``)."""

    task = models.CharField(max_length=200)
    args = models.JSONField(default=list)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"{self.task}{tuple(self.args)}"


class ApiToken(models.Model):
    """An API token of one person (``retrieval_app.core.tokens``): only a digest of its key is kept;
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
        indexes = [models.Index(fields=["owner", "-created_at"], name="apitoken_owner_created_idx")]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"
