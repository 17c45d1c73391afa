"""``manage.py backfill_embeddings``: embed every message, archive and memory that has no vector yet."""

from django.core.management.base import BaseCommand
from tqdm import tqdm

from foundation import ai
from foundation.embedding import embeddings_backfill
from foundation.tasks import backfill_embeddings


class Command(BaseCommand):
    help = "Embed messages, archives and memories that have no vector from the configured embedding model."

    def add_arguments(self, parser):
        parser.add_argument("--batch-size", type=int, default=64)
        parser.add_argument("--restale", action="store_true", help="also re-embed rows made by another embedding model")
        parser.add_argument("--async", dest="in_worker", action="store_true", help="queue it for a worker instead")

    def handle(self, *args, batch_size: int, restale: bool, in_worker: bool, **options):
        if in_worker:
            result = backfill_embeddings.delay(batch_size=batch_size, restale=restale)
            self.stdout.write(f"Queued as task {result.id}.")
            return
        model = ai.active_embedding_model()
        bars = []

        def progress(kind, total):
            bars.append(tqdm(total=total, desc=f"{kind.name} ({model})", unit="row", disable=total == 0))
            return bars[-1].update

        done = embeddings_backfill(batch_size=batch_size, restale=restale, progress=progress)
        for bar in bars:
            bar.close()
        for name, count in done.items():
            self.stdout.write(f"{name}: {count} embedded")
