"""Celery tasks of documents: they take ids, re-fetch rows and are idempotent."""

from __future__ import annotations

from celery import Task, shared_task

from documents_app import services
from documents_app.models import Document
from retrieval_app.core.ai import EmbeddingError

# A second that the claim may have gone stale by when the deferred job looks again.
CLAIM_RECHECK_MARGIN_S = 1.0


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
    # Acknowledged only once done, and handed out again at once if the process running it is killed:
    # running it again builds the same tree.
    acks_late=True,
    reject_on_worker_lost=True,
    bind=True,
)
def index_document(self: Task, document_id: str) -> str | None:
    """Indexes a pending document, or one whose previous run died.

    A document done meanwhile (this job delivered twice) is left alone. One whose claim another run
    still holds is looked at again once that claim would be stale: the job of a killed worker comes
    back at once, while the dead run's claim still looks fresh, and must not be dropped then.
    """
    document = services.document_index(document_id=document_id, redo_finished=False)
    # (Run inline, as in tests, the job would only call itself again at once.)
    if document is not None and document.status == Document.Status.INDEXING and not self.request.is_eager:
        delay = services.document_claim_expires_in(document=document) + CLAIM_RECHECK_MARGIN_S
        index_document.apply_async(args=[document_id], countdown=delay)
    return document.status if document else None


@shared_task(name=services.RESCUE_TASK)
def rescue_stalled_documents() -> int:
    """Queues again the documents whose indexing run died; the number queued."""
    return len(services.documents_rescue_stalled())


@shared_task(
    name=services.RETITLE_TASK,
    autoretry_for=(EmbeddingError,),
    retry_backoff=5,
    retry_backoff_max=300,
    max_retries=6,
)
def embed_title(document_id: str) -> int:
    """Makes again the vectors of a renamed document's title nodes; the number made."""
    return services.document_embed_title(document_id=document_id)
