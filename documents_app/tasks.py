"""Celery tasks of documents: they take ids, re-fetch rows and are idempotent."""

from __future__ import annotations

from celery import Task, shared_task

from documents_app import services
from retrieval_app.core.ai import EmbeddingError


class IndexTask(Task):
    def on_failure(self, exc, task_id, args, kwargs, einfo) -> None:
        """Retries used up, or an unexpected error: the document says so instead of staying "indexing"."""
        if args:
            services.document_fail(document_id=args[0], reason=f"Indexing failed: {exc}")


@shared_task(
    name=services.INDEX_TASK,
    base=IndexTask,
    autoretry_for=(EmbeddingError,),
    retry_backoff=5,
    retry_backoff_max=300,
    max_retries=6,
)
def index_document(document_id: str) -> str | None:
    """Indexes a document (acknowledged only once done: a worker killed midway leaves it to be run
    again, and running it again builds the same tree)."""
    document = services.document_index(document_id=document_id)
    return document.status if document else None
