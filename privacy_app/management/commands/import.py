"""``manage.py import <file> --user <username>``: an export zip (or an OpenAI-format message list)
into a person's account, here and now with a progress bar, the same as ``POST /api/import``."""

from pathlib import Path

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError
from tqdm import tqdm

from foundation.exceptions import DomainError
from privacy_app import imports


class Command(BaseCommand):
    help = "Import an export zip or an OpenAI-format message list into a person's account."

    def add_arguments(self, parser):
        parser.add_argument("file", help="the export zip, or a JSON message list")
        parser.add_argument("--user", required=True, help="the username the data is imported for")
        parser.add_argument("--async", dest="in_worker", action="store_true", help="queue it for a worker instead")

    def handle(self, *args, file: str, user: str, in_worker: bool, **options):
        owner = get_user_model().objects.filter(username=user).first()
        if owner is None:
            raise CommandError(f"No user {user!r}.")
        source = Path(file)
        if not source.is_file():
            raise CommandError(f"No file {file!r}.")
        try:
            with source.open("rb") as upload:
                job = imports.import_create(
                    owner=owner,
                    upload=upload,
                    filename=source.name,
                    size=source.stat().st_size,
                    inline=False,
                    queue=in_worker,
                )
            if in_worker:
                self.stdout.write(f"Queued as import {job.id}; GET /api/import/{job.id} tells its progress.")
                return
            with tqdm(total=sum(job.totals.values()), desc=f"importing {source.name}", unit="item") as bar:
                job = imports.import_run(job_id=job.id, progress=bar.update, raise_errors=True)
        except DomainError as exc:
            raise CommandError(exc.message) from exc
        status = imports.import_status(job=job)
        self.stdout.write(
            f"Import {job.id}: {status['state']}; imported {status['counts']}; already there {status['skipped']}."
        )
        for error in status["errors"]:
            self.stdout.write(f"  not imported: {error}")
