"""Celery tasks of documents: they take ids, re-fetch rows and are idempotent."""

from __future__ import annotations

from celery import shared_task

from retrieval_app.ai import EmbeddingError


@shared_task(autoretry_for=(EmbeddingError,), retry_backoff=5, retry_backoff_max=300, max_retries=6)
def index_document(document_id: str) -> str | None:
    """Indexes a document (acknowledged only once done: a worker killed midway leaves it to be run
    again, and running it again builds the same tree)."""
    from documents_app.services import document_index

    document = document_index(document_id=document_id)
    return document.status if document else None
