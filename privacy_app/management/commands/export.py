"""``manage.py export --user <username> [--output file.zip] [--format okf] [--no-vectors]``: everything a
person owns as one zip, the same as ``GET /api/export``."""

from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError

from privacy_app import exports, okf


class Command(BaseCommand):
    help = "Export everything a person owns into one zip (sessions, archives, memories, documents)."

    def add_arguments(self, parser):
        parser.add_argument("--user", required=True, help="the username whose data is exported")
        parser.add_argument("--output", help="the zip to write (default: recollect-export-<user>-<time>.zip)")
        parser.add_argument("--format", choices=["recollect", "okf"], default="recollect")
        parser.add_argument("--no-vectors", action="store_true", help="leave the vectors out (a smaller file)")

    def handle(self, *args, user: str, output: str | None, format: str, no_vectors: bool, **options):
        owner = get_user_model().objects.filter(username=user).first()
        if owner is None:
            raise CommandError(f"No user {user!r}.")
        suffix = "-okf" if format == "okf" else ""
        target = Path(output or exports.export_filename(owner=owner, suffix=suffix))
        with target.open("wb") as out:
            if format == "okf":
                counts = okf.okf_write(owner=owner, target=out)
            else:
                counts = exports.export_write(owner=owner, target=out, vectors=not no_vectors)["counts"]
        summary = ", ".join(f"{count} {kind}" for kind, count in counts.items())
        self.stdout.write(f"Wrote {target} ({target.stat().st_size} bytes): {summary}.")
