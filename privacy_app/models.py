"""What a person's data keeps about its own moves: the imports they ran, and which items of each source
have come in already (so that importing the same file twice changes nothing)."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.db import models
from django.utils import timezone

# --- Export and import ------------------------------------------------------------------------------


class ImportJob(models.Model):
    """One import of an export archive (or of a plain message list) into a person's account: its
    state, what it holds by kind, how much of it is in, and what could not be imported."""

    class State(models.TextChoices):
        QUEUED = "queued", "queued"
        RUNNING = "running", "running"
        DONE = "done", "done"
        FAILED = "failed", "failed"

    class Kind(models.TextChoices):
        ARCHIVE = "recollect", "Recollect export"
        MESSAGES = "messages", "OpenAI-format message list"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="import_jobs")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    filename = models.CharField(max_length=255, blank=True, default="")
    size_bytes = models.PositiveBigIntegerField(default=0)
    # The uploaded file, kept in the media storage until a worker has imported it, then removed.
    stored_name = models.CharField(max_length=255, blank=True, default="")
    # Where the items came from (the export's source, or a digest of a message list): with each item's
    # own id it keys what was imported already.
    source = models.CharField(max_length=128, blank=True, default="")
    state = models.CharField(max_length=16, choices=State.choices, default=State.QUEUED)
    totals = models.JSONField(default=dict, blank=True)
    done = models.JSONField(default=dict, blank=True)
    skipped = models.JSONField(default=dict, blank=True)
    errors = models.JSONField(default=list, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    started_at = models.DateTimeField(null=True, blank=True)
    finished_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [models.Index(fields=["owner", "-created_at"], name="importjob_owner_created_idx")]

    def __str__(self) -> str:
        return f"import {self.id} ({self.state})"


class ImportedItem(models.Model):
    """An item of an export already imported into a person's account, by its id in the source, and
    what it became here. Scoped per person: ids from a file never reach anyone else's rows."""

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="imported_items")
    source = models.CharField(max_length=128)
    kind = models.CharField(max_length=16)
    stable_id = models.CharField(max_length=512)
    local_id = models.CharField(max_length=64)
    job = models.ForeignKey(ImportJob, null=True, blank=True, on_delete=models.SET_NULL, related_name="items")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["owner", "source", "kind", "stable_id"], name="imported_item_uniq")
        ]

    def __str__(self) -> str:
        return f"{self.kind} {self.stable_id} → {self.local_id}"
