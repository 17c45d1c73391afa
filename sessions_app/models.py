"""Conversations and what is remembered of them: sessions, messages, archives and memories."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.db.models.functions import Coalesce
from django.utils import timezone
from pgvector.django import HnswIndex

from foundation.ai.memories import CATEGORIES
from foundation.fields import EmbeddedModel
from foundation.text import TEXT_SEARCH_CONFIG
from sessions_app.uris import memory_uri, session_uri


def _hnsw(name: str) -> HnswIndex:
    return HnswIndex(name=name, fields=["embedding"], m=16, ef_construction=64, opclasses=["vector_cosine_ops"])


class ChatSession(models.Model):
    """One conversation of a user, optionally through an agent (``agent_id``).

    Named ChatSession so it is never confused with ``django.contrib.sessions``. The rolling summary
    covers every message up to ``summary_through_seq`` (its watermark); later turns stay verbatim.
    """

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="chat_sessions")
    agent_id = models.CharField(max_length=128, blank=True, default="", db_index=True)
    title = models.CharField(max_length=255, blank=True, default="")
    metadata = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)
    last_message_at = models.DateTimeField(null=True, blank=True)
    committed_at = models.DateTimeField(null=True, blank=True)
    rolling_summary = models.TextField(blank=True, default="")
    summary_through_seq = models.PositiveIntegerField(default=0)
    summary_updated_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        indexes = [
            # "Newest activity first" for one owner (and agent), straight from the index.
            models.Index(
                "owner",
                "agent_id",
                Coalesce("last_message_at", "created_at").desc(),
                name="session_agent_activity_idx",
            ),
            models.Index("owner", Coalesce("last_message_at", "created_at").desc(), name="session_owner_activity_idx"),
        ]

    def __str__(self) -> str:
        return self.title or f"Session {self.id}"

    @property
    def uri(self) -> str:
        return session_uri(self.id)


class Archive(EmbeddedModel):
    """A committed run of a session's messages, with its L0 abstract and L1 overview."""

    session = models.ForeignKey(ChatSession, on_delete=models.CASCADE, related_name="archives")
    # Copied from the session, so that searches over a user's archives filter one table.
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="archives")
    agent_id = models.CharField(max_length=128, blank=True, default="")
    index = models.PositiveIntegerField(help_text="1 for the session's first archive, then 2, 3, ...")
    uri = models.CharField(max_length=255, unique=True)
    first_seq = models.PositiveIntegerField()
    last_seq = models.PositiveIntegerField()
    message_count = models.PositiveIntegerField()
    abstract = models.TextField(blank=True, default="", help_text="L0: one line.")
    overview = models.TextField(blank=True, default="", help_text="L1: topic, intent, outcome, open items, facts.")
    # The same overview as fields: {"topic", "intent", "outcome", "open_items": [], "key_facts": [{"who", "fact"}]}.
    overview_data = models.JSONField(default=dict, blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta(EmbeddedModel.Meta):
        constraints = [
            *EmbeddedModel.Meta.constraints,
            models.UniqueConstraint(fields=["session", "index"], name="archive_session_index_uniq"),
        ]
        indexes = [
            _hnsw("archive_embedding_hnsw"),
            models.Index(fields=["owner", "agent_id", "embedding_model"], name="archive_owner_agent_idx"),
        ]
        ordering = ["session", "index"]

    def __str__(self) -> str:
        return self.uri


# ``metadata.source`` of text the product itself put into a conversation: quotes of retrieved passages,
# recalled memories, summaries, injected context. It is never a new fact about the user: summaries,
# memories and recall leave it out, so the product never echoes itself back.
DERIVED_SOURCES = frozenset({"retrieved", "recall", "memory", "memories", "summary", "context", "retrieval"})


def _derived() -> models.Q:
    """The messages the product wrote itself (``Message.is_derived``), as a filter."""
    # Containment (jsonb @>) is never NULL, so messages without these keys are never derived.
    derived = models.Q(role="system") | models.Q(metadata__contains={"injected": True})
    for source in sorted(DERIVED_SOURCES):
        derived |= models.Q(metadata__contains={"source": source})
    return derived


class MessageQuerySet(models.QuerySet):
    """Messages narrowed the ways readers need: what people said, apart from what the product wrote."""

    def said(self) -> MessageQuerySet:
        """What people (or a generating model) said: without system turns and text the product wrote
        into the conversation itself (``Message.is_derived``)."""
        return self.exclude(_derived())


class Message(EmbeddedModel):
    """One turn of a session. ``seq`` orders a session's turns even when imported timestamps tie."""

    class Role(models.TextChoices):
        USER = "user", "user"
        ASSISTANT = "assistant", "assistant"
        SYSTEM = "system", "system"

    session = models.ForeignKey(ChatSession, on_delete=models.CASCADE, related_name="messages")
    # Owner and agent are copied from the session so that recall filters one table, not a join.
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="chat_messages")
    agent_id = models.CharField(max_length=128, blank=True, default="")
    seq = models.PositiveIntegerField()
    role = models.CharField(max_length=16, choices=Role.choices)
    content = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)
    token_count = models.PositiveIntegerField(default=0)
    metadata = models.JSONField(default=dict, blank=True)
    archive = models.ForeignKey(Archive, null=True, blank=True, on_delete=models.SET_NULL, related_name="messages")
    search_vector = models.GeneratedField(
        expression=SearchVector("content", config=TEXT_SEARCH_CONFIG),
        output_field=SearchVectorField(),
        db_persist=True,
    )

    objects = MessageQuerySet.as_manager()

    class Meta(EmbeddedModel.Meta):
        constraints = [
            *EmbeddedModel.Meta.constraints,
            models.UniqueConstraint(fields=["session", "seq"], name="message_session_seq_uniq"),
        ]
        indexes = [
            _hnsw("message_embedding_hnsw"),
            GinIndex(fields=["search_vector"], name="message_search_gin"),
            models.Index(fields=["owner", "agent_id", "embedding_model"], name="message_owner_agent_idx"),
            models.Index(fields=["owner", "-created_at"], name="message_owner_created_idx"),
            # Backfill finds the rows still waiting for an embedding without scanning the rest. What the
            # product wrote itself is never embedded (see the messages' Embeddable), so it never waits.
            models.Index(
                fields=["id"], name="message_unembedded_idx", condition=models.Q(embedding__isnull=True) & ~_derived()
            ),
        ]
        ordering = ["session", "seq"]

    def __str__(self) -> str:
        return f"{self.role}: {self.content[:60]}"

    @property
    def is_derived(self) -> bool:
        """Text the product itself put into the conversation: system turns and marked context."""
        metadata = self.metadata or {}
        return (
            self.role == self.Role.SYSTEM
            or bool(metadata.get("injected"))
            or str(metadata.get("source", "")).lower() in DERIVED_SOURCES
        )


class Memory(EmbeddedModel):
    """A long-term fact extracted at commit, keyed so that a newer statement updates it in place."""

    # The categories are the model layer's, which extracts them: one list for both.
    Category = models.TextChoices("Category", [(name.upper(), (name, name)) for name in CATEGORIES])

    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="memories")
    agent_id = models.CharField(max_length=128, blank=True, default="")
    category = models.CharField(max_length=32, choices=Category.choices)
    key = models.CharField(max_length=255)
    content = models.TextField()
    # Earlier texts of this memory, oldest first: [{"content", "replaced_at", "archive_uri"}].
    history = models.JSONField(default=list, blank=True)
    source_archive = models.ForeignKey(
        Archive, null=True, blank=True, on_delete=models.SET_NULL, related_name="memories"
    )
    source_messages = models.ManyToManyField(Message, blank=True, related_name="memories")
    superseded_by = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="supersedes"
    )
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)
    search_vector = models.GeneratedField(
        expression=SearchVector("key", "content", config=TEXT_SEARCH_CONFIG),
        output_field=SearchVectorField(),
        db_persist=True,
    )

    class Meta(EmbeddedModel.Meta):
        verbose_name_plural = "memories"
        constraints = [
            *EmbeddedModel.Meta.constraints,
            models.UniqueConstraint(
                fields=["owner", "agent_id", "category", "key"],
                condition=models.Q(superseded_by__isnull=True),
                name="memory_current_key_uniq",
            ),
        ]
        indexes = [
            _hnsw("memory_embedding_hnsw"),
            GinIndex(fields=["search_vector"], name="memory_search_gin"),
            models.Index(fields=["owner", "agent_id", "category"], name="memory_owner_agent_cat_idx"),
        ]

    def __str__(self) -> str:
        return f"{self.category}/{self.key}"

    @property
    def uri(self) -> str:
        return memory_uri(self.owner_id, self.category, self.pk)
