"""Reads of documents and their trees, always scoped to one owner."""

from __future__ import annotations

import uuid

from django.db.models import QuerySet

from documents_app.exceptions import DocumentNotFound
from documents_app.models import Document


def document_list(*, owner) -> QuerySet[Document]:
    return Document.objects.filter(owner=owner).order_by("-created_at")


def document_get(*, owner, doc_id: uuid.UUID | str) -> Document:
    """The owner's document; another user's document is indistinguishable from a missing one."""
    try:
        return Document.objects.get(owner=owner, id=uuid.UUID(str(doc_id)))
    except (ValueError, Document.DoesNotExist) as exc:
        raise DocumentNotFound() from exc
