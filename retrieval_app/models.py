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
    total_ms = models.FloatField(default=0.0)
    created_at = models.DateTimeField(default=timezone.now, db_index=True)

    class Meta:
        indexes = [
            models.Index(fields=["owner", "-created_at"], name="trace_owner_created_idx"),
            models.Index(fields=["session", "-created_at"], name="trace_session_created_idx"),
            GinIndex(fields=["document_ids"], name="trace_document_ids_gin"),
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
        indexes = [models.Index(fields=["purpose", "-created_at"], name="modelcall_purpose_idx")]

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
    """A named API token of one person (``retrieval_app.core.tokens``): only a digest of its key is
    kept; the key itself is shown once, when the token is created."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens")
    name = models.CharField(max_length=100, help_text="What the person uses it for, e.g. the agent's name.")
    prefix = models.CharField(max_length=16, help_text="The key's first characters, to recognise it by.")
    key_digest = models.CharField(max_length=64, unique=True, help_text="SHA-256 of the key, in hex.")
    created_at = models.DateTimeField(default=timezone.now)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["owner", "-created_at"], name="apitoken_owner_created_idx")]

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix}…)"
