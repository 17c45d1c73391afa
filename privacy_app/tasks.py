"""The workers' jobs of a person's data as a whole: a large import runs here, away from the request."""

from __future__ import annotations

from celery import shared_task

from foundation import task_names
from privacy_app import imports


@shared_task(name=task_names.IMPORT_RUN)
def import_run(job_id: str) -> str:
    """Imports an uploaded export already checked by the request; a job already run is left as it is."""
    job = imports.import_run(job_id=job_id)
    return job.state if job else "gone"
