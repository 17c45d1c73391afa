"""Retrieval's own record: the trace of every search, kept for debugging and the operators' pages."""

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
    # Milliseconds per stage ({"dense": 3.1, "first_token": 412.0, ...}; foundation.tracing.TIMED_STAGES), kept
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
