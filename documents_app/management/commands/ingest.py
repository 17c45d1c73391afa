"""``manage.py ingest PATH... --user NAME``: load files and folders (recursively) without the browser."""

from __future__ import annotations

from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from documents_app import services
from documents_app.exceptions import DocumentTooLarge, UnsupportedDocument

SUFFIXES = {".txt", ".text", ".md", ".markdown", ".html", ".htm", ".pdf", ".docx", ".log", ".csv"}


class Command(BaseCommand):
    help = "Upload and index documents from files or folders (recursively), with a progress bar."

    def add_arguments(self, parser):
        parser.add_argument("paths", nargs="+", type=Path)
        parser.add_argument("--user", required=True, help="the owner of the documents (a username)")
        parser.add_argument(
            "--async", dest="in_worker", action="store_true", help="only upload here; let the Celery workers index"
        )

    def handle(self, *args, paths: list[Path], user: str, in_worker: bool, **options):
        try:
            owner = get_user_model().objects.get(username=user)
        except get_user_model().DoesNotExist as exc:
            raise CommandError(f"No user named {user!r}.") from exc
        found = []
        for path in paths:
            if path.is_dir():
                found += sorted(p for p in path.rglob("*") if p.is_file() and p.suffix.lower() in SUFFIXES)
            elif path.is_file():
                found.append(path)
            else:
                raise CommandError(f"{path} does not exist.")
        counts = {"indexed": 0, "existing": 0, "refused": 0, "failed": 0, "queued": 0}
        for path in tqdm(found, desc="documents", unit="doc"):
            try:
                document, created = services.document_upload(
                    owner=owner, filename=path.name, data=path.read_bytes(), enqueue=in_worker
                )
            except (UnsupportedDocument, DocumentTooLarge) as exc:
                counts["refused"] += 1
                tqdm.write(f"refused {path}: {exc.message}")
                continue
            if not created:
                counts["existing"] += 1
            elif in_worker:
                counts["queued"] += 1
            else:
                document = services.document_index(document_id=document.id)
                if document.status == document.Status.READY:
                    counts["indexed"] += 1
                else:
                    counts["failed"] += 1
                    tqdm.write(f"failed {path}: {document.error}")
        self.stdout.write(", ".join(f"{n} {what}" for what, n in counts.items() if n) or "nothing to do")
