"""Model fields for embeddings."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.db import models
from pgvector.django import VectorField


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
