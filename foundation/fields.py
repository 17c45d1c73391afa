"""Model fields for embeddings."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import migrations, models
from pgvector.django import VectorField

# The row size up to which PostgreSQL keeps a row whole on its page (its largest for 8 kB pages), and
# the storage that keeps a vector on the page while anything else of the row can go.
INLINE_ROW_BYTES = 8160
INLINE_VECTOR_STORAGE = "MAIN"
# pgvector's own default for a vector column.
DEFAULT_VECTOR_STORAGE = "EXTERNAL"


class EmbeddingField(VectorField):
    """A pgvector column sized by ``settings.EMBEDDING_DIMENSIONS`` when its DDL is generated.

    The size is left out of migrations on purpose: the same migrations create ``vector(384)`` for the
    built-in model and ``vector(1536)`` for a hosted one, and ``makemigrations --check`` stays clean
    whichever is configured.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.pop("dimensions", None)
        super().__init__(*args, **kwargs)

    def db_type(self, connection: Any) -> str:
        return f"vector({int(settings.EMBEDDING_DIMENSIONS)})"


class EmbeddedModel(models.Model):
    """Adds an embedding and the name of the model that made it.

    Vector queries always filter on ``embedding_model``, so vectors of two models are never compared.
    Subclasses declare their own HNSW index (index names are per table).
    """

    embedding = EmbeddingField(null=True, blank=True, editable=False)
    embedding_model = models.CharField(max_length=200, blank=True, default="", editable=False)

    class Meta:
        abstract = True
        constraints = [
            models.CheckConstraint(
                condition=models.Q(embedding__isnull=True) | ~models.Q(embedding_model=""),
                name="%(app_label)s_%(class)s_embedding_has_model",
            )
        ]


def keep_vectors_inline(table: str) -> migrations.RunSQL:
    """A migration step for a table of ``EmbeddedModel``: its vectors kept on the row's own page.

    By default PostgreSQL moves a row's values into a side table (TOAST) once the row passes 2 kB, the
    vector first since it is the largest and cannot be compressed: a chunk of a manual with its vector
    and text always passes it. Ranking then reads two or three extra pages per row for the vector (a
    descent compares hundreds of rows). Rows are kept whole up to a page, and when one is larger its
    text goes first. Rows already stored change when rewritten (``VACUUM FULL``, or a reindex).
    """
    return migrations.RunSQL(
        sql=[
            f"ALTER TABLE {table} SET (toast_tuple_target = {INLINE_ROW_BYTES})",
            f"ALTER TABLE {table} ALTER COLUMN embedding SET STORAGE {INLINE_VECTOR_STORAGE}",
        ],
        reverse_sql=[
            f"ALTER TABLE {table} RESET (toast_tuple_target)",
            f"ALTER TABLE {table} ALTER COLUMN embedding SET STORAGE {DEFAULT_VECTOR_STORAGE}",
        ],
    )
