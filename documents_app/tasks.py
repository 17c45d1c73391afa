"""Celery tasks of documents: they take ids, re-fetch rows and are idempotent."""

from __future__ import annotations

from celery import Task, shared_task
from celery.exceptions import SoftTimeLimitExceeded
from django.conf import settings

from documents_app import services
from documents_app.models import Document
from foundation import task_names
from foundation.tasks import EMBEDDING_RETRY

# A second that the claim may have gone stale by when the deferred job looks again.
CLAIM_RECHECK_MARGIN_S = 1.0


class IndexTask(Task):
    def on_failure(self, exc, task_id, args, kwargs, einfo) -> None:
        """Retries used up, or an unexpected error: the document says so instead of staying "indexing"."""
        if args:
            services.document_fail(document_id=args[0], reason=f"Indexing failed: {exc}")


@shared_task(
    name=task_names.DOCUMENT_INDEX,
    base=IndexTask,
    **EMBEDDING_RETRY,
    # Over the soft limit the run is interrupted and the document fails, saying so; a run that does not
    # stop then has its process killed, and the document's attempts counter keeps it from coming back.
    soft_time_limit=settings.DOCUMENT_INDEX_TIME_LIMIT_S,
    time_limit=settings.DOCUMENT_INDEX_TIME_LIMIT_S + settings.DOCUMENT_INDEX_KILL_GRACE_S,
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
    back at once, while the dead run's claim still looks fresh, and must not be dropped then. One left
    pending because its owner has as many documents being indexed as one person may is looked at again
    later (``services.document_turn_in``), leaving this worker process to someone else's document meanwhile.
    """
    # (Run inline, as in tests, the job would only call itself again at once.)
    inline = self.request.is_eager
    try:
        document = services.document_index(document_id=document_id, redo_finished=False, fair=not inline)
    except SoftTimeLimitExceeded:
        services.document_fail(document_id=document_id, reason=services.time_limit_reason())
        return Document.Status.FAILED
    if document is None or inline:
        return document.status if document else None
    if document.status == Document.Status.INDEXING:
        delay = services.document_claim_expires_in(document=document) + CLAIM_RECHECK_MARGIN_S
        index_document.apply_async(args=[document_id], countdown=delay)
    elif document.status == Document.Status.PENDING:
        index_document.apply_async(args=[document_id], countdown=services.document_turn_in(document=document))
    return document.status


@shared_task(name=task_names.DOCUMENTS_RESCUE_STALLED)
def rescue_stalled_documents() -> int:
    """Queues again the documents whose indexing run died; the number queued."""
    return len(services.documents_rescue_stalled())


@shared_task(
    name=task_names.DOCUMENT_EMBED_TITLE,
    **EMBEDDING_RETRY,
)
def embed_title(document_id: str) -> int:
    """Makes again the vectors of a renamed document's title nodes; the number made."""
    return services.document_embed_title(document_id=document_id)
