"""``manage.py reindex``: index documents again, e.g. after a change of embedding model or chunking."""

from django.core.management.base import BaseCommand
from tqdm import tqdm

from documents_app import services
from documents_app.models import Document


class Command(BaseCommand):
    help = "Index documents again (all, one user's, or those not ready), here or in the workers."

    def add_arguments(self, parser):
        parser.add_argument("--user", help="only this user's documents (a username)")
        parser.add_argument("--not-ready", action="store_true", help="only documents pending, failed or stuck")
        parser.add_argument("--async", dest="in_worker", action="store_true", help="queue them for the workers")

    def handle(self, *args, user: str | None, not_ready: bool, in_worker: bool, **options):
        documents = Document.objects.order_by("created_at")
        if user:
            documents = documents.filter(owner__username=user)
        if not_ready:
            documents = documents.exclude(status=Document.Status.READY)
        ready = failed = 0
        for document in tqdm(list(documents), desc="reindex", unit="doc"):
            if in_worker:
                services.document_reindex(document=document)
                continue
            result = services.document_index(document_id=document.id)
            if result is not None and result.status == Document.Status.READY:
                ready += 1
            else:
                failed += 1
        self.stdout.write("queued" if in_worker else f"{ready} ready, {failed} failed")
