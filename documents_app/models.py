"""Documents and the tree of nodes they are indexed into, under viking:// URIs."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.contrib.postgres.indexes import GinIndex
from django.contrib.postgres.search import SearchVector, SearchVectorField
from django.db import models
from django.utils import timezone
from pgvector.django import HnswIndex

from foundation.fields import EmbeddedModel
from foundation.text import TEXT_SEARCH_CONFIG


class Document(models.Model):
    """An uploaded file and the state of its indexing (pending, indexing, ready or failed)."""

    class Status(models.TextChoices):
        PENDING = "pending", "pending"
        INDEXING = "indexing", "indexing"
        READY = "ready", "ready"
        FAILED = "failed", "failed"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="documents")
    uri = models.CharField(max_length=512, unique=True)
    title = models.CharField(max_length=512, blank=True, default="")
    # A title a person gave (at upload, or by renaming) is kept; otherwise each indexing names the
    # document from its file (its own title, its heading or its file name).
    title_given = models.BooleanField(default=False)
    filename = models.CharField(max_length=512, blank=True, default="")
    media_type = models.CharField(max_length=128, blank=True, default="")
    size_bytes = models.PositiveBigIntegerField(default=0)
    content_hash = models.CharField(max_length=64, help_text="SHA-256 of the uploaded bytes.")
    file = models.FileField(upload_to="documents/%Y/%m/", blank=True)
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.PENDING)
    error = models.TextField(blank=True, default="")
    node_count = models.PositiveIntegerField(default=0)
    # Indexing runs started since the document last finished one (ready, failed or waiting to retry): a
    # run whose process was killed (out of memory, over the time limit) leaves it counted, and a document
    # that has used up DOCUMENT_INDEX_MAX_ATTEMPTS fails instead of being handed out yet again.
    index_attempts = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)
    updated_at = models.DateTimeField(auto_now=True)
    indexed_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            # A second upload of the same bytes by the same user returns the existing document.
            models.UniqueConstraint(fields=["owner", "content_hash"], name="document_owner_hash_uniq")
        ]
        indexes = [
            models.Index(fields=["owner", "status", "-created_at"], name="document_owner_status_idx"),
            # Whether anyone else's document waits is asked before each of one person's short texts is
            # indexed beside another (services._owner_busy): read from the few waiting, not every document.
            models.Index(fields=["owner"], condition=models.Q(status="pending"), name="document_waiting_idx"),
        ]

    def __str__(self) -> str:
        return self.title or self.filename or str(self.id)


class DocumentNode(EmbeddedModel):
    """One node of a document's tree: the document itself, a section, or a chunk of text.

    Every node has three tiers: L0 ``abstract`` (a line), L1 ``overview`` (a paragraph) and L2
    ``content`` (the full text; empty on directories, whose full text is their children's).
    """

    class Kind(models.TextChoices):
        DOCUMENT = "document", "document"
        SECTION = "section", "section"
        CHUNK = "chunk", "chunk"

    document = models.ForeignKey(Document, on_delete=models.CASCADE, related_name="nodes")
    # Copied from the document so that scoped searches filter one table.
    owner = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="document_nodes")
    uri = models.CharField(max_length=512, unique=True)
    parent_uri = models.CharField(max_length=512, blank=True, default="")
    kind = models.CharField(max_length=16, choices=Kind.choices)
    level = models.PositiveSmallIntegerField(help_text="Depth in the tree: 0 for the document itself.")
    position = models.PositiveIntegerField(help_text="Order among its siblings.")
    title = models.CharField(max_length=512, blank=True, default="")
    abstract = models.TextField(blank=True, default="", help_text="L0")
    overview = models.TextField(blank=True, default="", help_text="L1")
    content = models.TextField(blank=True, default="", help_text="L2")
    content_hash = models.CharField(max_length=64, blank=True, default="")
    # A chunk's first characters that repeat the end of the chunk before it (removed to rebuild L2).
    overlap_chars = models.PositiveIntegerField(default=0)
    token_count = models.PositiveIntegerField(default=0)
    search_vector = models.GeneratedField(
        expression=SearchVector("title", weight="A", config=TEXT_SEARCH_CONFIG)
        + SearchVector("abstract", "overview", weight="B", config=TEXT_SEARCH_CONFIG)
        + SearchVector("content", weight="D", config=TEXT_SEARCH_CONFIG),
        output_field=SearchVectorField(),
        db_persist=True,
    )

    class Meta(EmbeddedModel.Meta):
        indexes = [
            HnswIndex(
                name="docnode_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
            ),
            # Directories alone (documents and sections): hierarchical retrieval's starting points are
            # found without walking past the far more numerous chunks in the graph above.
            HnswIndex(
                name="docnode_dir_embedding_hnsw",
                fields=["embedding"],
                m=16,
                ef_construction=64,
                opclasses=["vector_cosine_ops"],
                condition=~models.Q(kind="chunk"),
            ),
            GinIndex(fields=["search_vector"], name="docnode_search_gin"),
            # Likewise for their keyword search: the full index would fetch every matching chunk first.
            GinIndex(fields=["search_vector"], name="docnode_dir_search_gin", condition=~models.Q(kind="chunk")),
            models.Index(fields=["owner", "kind", "embedding_model"], name="docnode_owner_kind_idx"),
            # A person's directories ranked exactly (a few hundred of their many thousand nodes): read
            # through this instead of scanning every chunk.
            models.Index(
                fields=["owner", "embedding_model"], name="docnode_dir_owner_idx", condition=~models.Q(kind="chunk")
            ),
            models.Index(fields=["document", "level", "position"], name="docnode_doc_level_pos_idx"),
            # Listing a directory: its children in order.
            models.Index(fields=["parent_uri", "position"], name="docnode_parent_pos_idx"),
            # Prefix matches (uri LIKE 'viking://.../documents/<id>/%') for subtree scoping.
            models.Index(fields=["uri"], name="docnode_uri_prefix_idx", opclasses=["varchar_pattern_ops"]),
        ]

    def __str__(self) -> str:
        return self.uri
