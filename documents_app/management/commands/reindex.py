"""``manage.py reindex --user NAME | --all-users``: index documents again, e.g. after a change of embedding
model or chunking. Whose documents is always said: one user's, or, explicitly, everyone's. Every
document that fails is named with its error, and the exit status is then non-zero."""

import logging
import sys

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from documents_app import services
from documents_app.models import Document

logger = logging.getLogger(__name__)

# The exit status when some documents failed to index: 1 is any other error, 2 a command given wrongly.
EXIT_SOME_FAILED = 3


def _index(document: Document) -> str:
    """Indexes ``document`` here; what went wrong, in words, or "" when it is ready."""
    try:
        result = services.document_index(document_id=document.id)
    except Exception as exc:  # one document's failure must not stop the others, nor their report
        logger.exception("reindexing document %s failed", document.id)
        # As a worker's failed job does, so the document says why instead of staying "indexing".
        services.document_fail(document_id=document.id, reason=f"Indexing failed: {exc}")
        return f"{type(exc).__name__}: {exc}"
    if result is None:
        return "it was deleted meanwhile"
    if result.status == Document.Status.READY:
        return ""
    return result.error or f"still {result.get_status_display()} (by another run, or stuck until its claim expires)"


class Command(BaseCommand):
    help = (
        "Index documents again (one user's, or with --all-users everyone's; optionally only those not ready), "
        f"here or in the workers. Every failure is listed, and the exit status is then {EXIT_SOME_FAILED}."
    )

    def add_arguments(self, parser):
        whose = parser.add_mutually_exclusive_group(required=True)
        whose.add_argument("--user", help="only this user's documents (a username)")
        whose.add_argument("--all-users", action="store_true", help="every user's documents")
        parser.add_argument("--not-ready", action="store_true", help="only documents pending, failed or stuck")
        parser.add_argument("--async", dest="in_worker", action="store_true", help="queue them for the workers")

    def handle(self, *args, user: str | None, all_users: bool, not_ready: bool, in_worker: bool, **options):
        documents = Document.objects.select_related("owner").order_by("created_at")
        if user is not None:
            if not get_user_model().objects.filter(username=user).exists():
                raise CommandError(f"No user named {user!r}.")
            documents = documents.filter(owner__username=user)
        if not_ready:
            documents = documents.exclude(status=Document.Status.READY)
        ready, failed = 0, []
        for document in tqdm(list(documents), desc="reindex", unit="doc"):
            if in_worker:
                services.document_reindex(document=document)
                ready += 1
                continue
            error = _index(document)
            if error:
                failed.append(document)
                tqdm.write(
                    f"failed: {document.title or document.filename} ({document.owner}): {error}", file=sys.stderr
                )
            else:
                ready += 1
        whose = f"{user}'s" if user is not None else "every user's"
        done = f"{ready} queued" if in_worker else f"{ready} ready, {len(failed)} failed"
        self.stdout.write(f"{done} ({whose} documents{', not ready' if not_ready else ''})")
        if failed:
            raise CommandError(
                f"{len(failed)} documents failed to index; each is listed above.", returncode=EXIT_SOME_FAILED
            )
