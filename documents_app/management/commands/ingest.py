"""``manage.py ingest PATH... --user NAME``: load files and folders (recursively) without the browser.

Every file not ingested is named with its reason (a type this product does not read, unreadable, not a
regular file, refused, failed to index), and then the command exits non-zero, so that a script or a
person never takes a partial ingest for a whole one. Hidden files and folders (".git", ".DS_Store") are
not looked at; their number is said."""

from __future__ import annotations

import logging
import os
import stat
import sys
from dataclasses import dataclass, field
from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from documents_app import services
from documents_app.exceptions import DocumentTooLarge, UnsupportedDocument

logger = logging.getLogger(__name__)

SUFFIXES = {".txt", ".text", ".md", ".markdown", ".html", ".htm", ".pdf", ".docx", ".log", ".csv"}
# The exit status when some files were not ingested: 1 is any other error, 2 a command given wrongly.
EXIT_SOME_SKIPPED = 3


@dataclass
class Found:
    """What a walk of the paths found: the files to ingest, and those it passes over, with why."""

    files: list[Path] = field(default_factory=list)
    skipped: list[tuple[Path, str]] = field(default_factory=list)
    hidden: int = 0


def _kind_problem(path: Path) -> str:
    """Why ``path`` cannot be read as a document file, or "" (checked before it is opened: a pipe
    would block the read forever)."""
    try:
        mode = path.stat().st_mode
    except FileNotFoundError:
        return "a link to nothing"
    except OSError as exc:
        return f"unreadable ({exc.strerror or exc})"
    return "" if stat.S_ISREG(mode) else "not a regular file"


def _walk_folder(folder: Path, found: Found) -> None:
    def unreadable(exc: OSError) -> None:
        found.skipped.append((Path(exc.filename or folder), f"folder unreadable ({exc.strerror or exc})"))

    for root, dirs, files in os.walk(folder, onerror=unreadable):
        found.hidden += sum(name.startswith(".") for name in dirs) + sum(name.startswith(".") for name in files)
        dirs[:] = sorted(name for name in dirs if not name.startswith("."))
        for name in sorted(files):
            path = Path(root) / name
            if name.startswith("."):
                continue
            if path.suffix.lower() not in SUFFIXES:
                found.skipped.append((path, f"not a type this product reads ({path.suffix or 'no extension'})"))
            elif problem := _kind_problem(path):
                found.skipped.append((path, problem))
            else:
                found.files.append(path)


def find_files(paths: list[Path]) -> Found:
    """The files named, and those in the folders named (recursively), in a stable order."""
    found = Found()
    for path in paths:
        if path.is_dir():
            _walk_folder(path, found)
        elif not path.exists() and not path.is_symlink():
            raise CommandError(f"{path} does not exist.")
        elif problem := _kind_problem(path):
            found.skipped.append((path, problem))
        else:
            found.files.append(path)
    return found


class Command(BaseCommand):
    help = (
        "Upload and index documents from files or folders (recursively) into one user's account, with a "
        "progress bar. Every file not ingested is listed with its reason, and the exit status is then "
        f"{EXIT_SOME_SKIPPED}."
    )

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
        found = find_files(paths)
        for path, reason in found.skipped:
            self._skip(path, reason)
        counts = {"indexed": 0, "existing": 0, "queued": 0, "refused": 0, "unreadable": 0, "failed": 0}
        for path in tqdm(found.files, desc="documents", unit="doc"):
            outcome = self._ingest(path, owner=owner, in_worker=in_worker)
            counts[outcome] += 1
        counts["skipped"] = len(found.skipped)
        summary = ", ".join(f"{n} {what}" for what, n in counts.items() if n) or "nothing to do"
        if found.hidden:
            summary += f" ({found.hidden} hidden files and folders not looked at)"
        self.stdout.write(summary)
        missed = sum(counts[what] for what in ("refused", "unreadable", "failed", "skipped"))
        if missed:
            raise CommandError(
                f"{missed} of {missed + counts['indexed'] + counts['existing'] + counts['queued']} files were not "
                "ingested; each is listed above with its reason.",
                returncode=EXIT_SOME_SKIPPED,
            )

    def _ingest(self, path: Path, *, owner, in_worker: bool) -> str:
        """Uploads one file (and indexes it here unless ``in_worker``); says what became of it."""
        try:
            data = path.read_bytes()
        except OSError as exc:
            self._skip(path, f"unreadable ({exc.strerror or exc})")
            return "unreadable"
        try:
            document, created = services.document_upload(owner=owner, filename=path.name, data=data, enqueue=in_worker)
        except (UnsupportedDocument, DocumentTooLarge) as exc:
            self._skip(path, f"refused: {exc.message}")
            return "refused"
        if not created:
            return "existing"
        if in_worker:
            return "queued"
        try:
            document = services.document_index(document_id=document.id)
        except Exception as exc:  # one file's failure must not stop the others, nor their report
            logger.exception("indexing %s failed", path)
            # As a worker's failed job does, so the document says why instead of staying "indexing".
            services.document_fail(document_id=document.id, reason=f"Indexing failed: {exc}")
            self._skip(path, f"failed to index: {type(exc).__name__}: {exc}")
            return "failed"
        if document.status == document.Status.READY:
            return "indexed"
        self._skip(path, f"failed to index: {document.error or document.get_status_display()}")
        return "failed"

    def _skip(self, path: Path, reason: str) -> None:
        # Beside the progress bar, on the error stream: a script keeps them apart from the summary.
        tqdm.write(f"not ingested: {path}: {reason}", file=sys.stderr)
