"""Importing an export (or a plain message list) into a person's account, here or on another server.

Ids in the file never decide ownership: every row is made anew for the importing person, and what came
from where is kept per person (``ImportedItem``: source, kind, id in the source → id here), so importing
the same file twice changes nothing and a newer export of the same account adds only what is new.
Someone importing another person's export gets copies of their own; the other person's rows are never
looked up, let alone touched.

The whole upload is checked first (``privacy_app.archive``); then the conversations, archives and
memories go in in one transaction, and the documents after it commits, each through the usual upload
and indexing path. Vectors are reused when the export says they came from the model configured here
(same name and size), and made again by a worker otherwise.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import uuid
from collections.abc import Callable
from typing import IO, Any

from django.conf import settings
from django.core.cache import cache
from django.core.files.storage import default_storage
from django.db import transaction
from django.utils import timezone
from redis.exceptions import RedisError

from documents_app import services as documents
from foundation import ai, task_names
from foundation.exceptions import DomainError, NotFoundError
from foundation.queues import enqueue_on_commit
from privacy_app import archive as files
from privacy_app.import_records import ImportContext, import_records
from privacy_app.models import ImportedItem, ImportJob
from sessions_app import services as sessions

logger = logging.getLogger(__name__)

IMPORTS_FOLDER = "imports"
HEAD_BYTES = 4
# How long the progress of a running import stays readable after its last batch.
PROGRESS_TTL_S = 3600
PROGRESS_KEY = "privacy:import:{}:progress"


class ImportNotFound(NotFoundError):
    code = "import_not_found"
    default_message = "No such import."


def _inspect(stored: IO[bytes]) -> tuple[str, str, dict[str, int]]:
    """The kind of an upload, its source and its totals; every check an import makes before writing."""
    head = stored.read(HEAD_BYTES)
    stored.seek(0)
    if files.is_zip(head):
        export = files.ExportArchive(stored)
        export.verify()
        return ImportJob.Kind.ARCHIVE, export.source, export.totals()
    data = stored.read()
    _title, turns = files.message_list(data)
    return ImportJob.Kind.MESSAGES, "messages:" + hashlib.sha256(data).hexdigest()[:40], {"messages": len(turns)}


def import_create(
    *, owner, upload: IO[bytes], filename: str, size: int, inline: bool | None = None, queue: bool = True
) -> ImportJob:
    """Checks an upload whole and starts its import: in this process when it is small (or ``inline``),
    else in a worker (or, without ``queue``, not at all: the caller runs it). Raises a 400 (or 413) for
    an upload that cannot be imported; nothing is written."""
    files.check_upload_size(size)
    stored_name = default_storage.save(f"{IMPORTS_FOLDER}/{uuid.uuid4().hex}.upload", upload)
    try:
        with default_storage.open(stored_name, "rb") as stored:
            kind, source, totals = _inspect(stored)
    except BaseException:
        default_storage.delete(stored_name)
        raise
    job = ImportJob.objects.create(
        owner=owner,
        kind=kind,
        filename=(filename or "")[:255],
        size_bytes=size,
        stored_name=stored_name,
        source=source,
        totals=totals,
    )
    if inline if inline is not None else size <= settings.IMPORT_INLINE_MAX_BYTES:
        return import_run(job_id=job.id, raise_errors=True)
    if queue:
        enqueue_on_commit(task_names.IMPORT_RUN, str(job.id))
    return job


def _progress_saver(job: ImportJob, progress: Callable[[int], None] | None) -> Callable[[str, int], None]:
    """Counts what went in; others read it while the import's transaction is still open (from Redis)."""
    done: dict[str, int] = job.done

    def tick(kind: str, count: int) -> None:
        done[kind] = done.get(kind, 0) + count
        if progress:
            progress(count)
        with contextlib.suppress(RedisError):
            cache.set(PROGRESS_KEY.format(job.id), dict(done), PROGRESS_TTL_S)

    return tick


def import_run(*, job_id, progress: Callable[[int], None] | None = None, raise_errors: bool = False) -> ImportJob:
    """Runs a queued import once (a job already finished is returned as it is). ``progress`` is told how
    many items went in after each batch. With ``raise_errors`` a failure is raised after it is recorded."""
    job = ImportJob.objects.filter(pk=job_id).first()
    if job is None or job.state in (ImportJob.State.DONE, ImportJob.State.FAILED):
        return job
    ImportJob.objects.filter(pk=job.pk).update(state=ImportJob.State.RUNNING, started_at=timezone.now())
    job.done, job.skipped, job.errors = {}, {}, []
    tick = _progress_saver(job, progress)
    failure: DomainError | None = None
    try:
        with default_storage.open(job.stored_name, "rb") as stored:
            if job.kind == ImportJob.Kind.ARCHIVE:
                _run_archive(job, stored, tick)
            else:
                _run_messages(job, stored, tick)
        job.state = ImportJob.State.DONE
    except DomainError as exc:
        failure = exc
        job.state, job.done, job.skipped = ImportJob.State.FAILED, {}, {}
        job.errors.append({"code": exc.code, "message": exc.message, "details": exc.details})
    except Exception:
        logger.exception("import %s failed", job.pk)
        job.state, job.done, job.skipped = ImportJob.State.FAILED, {}, {}
        job.errors.append({"code": "server_error", "message": "The import failed; nothing of it was kept."})
    finally:
        with contextlib.suppress(OSError):
            default_storage.delete(job.stored_name)
        with contextlib.suppress(RedisError):
            cache.delete(PROGRESS_KEY.format(job.pk))
    job.finished_at, job.stored_name = timezone.now(), ""
    job.save(update_fields=["state", "done", "skipped", "errors", "finished_at", "stored_name"])
    if failure is not None and raise_errors:
        raise failure
    return job


def _reusable_model(manifest: dict[str, Any]) -> str | None:
    """The model whose vectors may be kept: the export's, when it is the one configured here."""
    embedding = manifest.get("embedding") or {}
    same = embedding.get("model") == ai.active_embedding_model()
    if same and embedding.get("dimensions") == settings.EMBEDDING_DIMENSIONS and embedding.get("vectors_included"):
        return ai.active_embedding_model()
    return None


def _run_archive(job: ImportJob, stored: IO[bytes], tick: Callable[[str, int], None]) -> None:
    export = files.ExportArchive(stored)
    export.verify()
    context = ImportContext(
        owner=job.owner, source=job.source, job=job, reuse_model=_reusable_model(export.manifest), tick=tick
    )
    with transaction.atomic():
        import_records(export=export, context=context)
    job.skipped = context.skipped
    for number, record in export.records("documents"):
        _import_document(export, context, files.Record(record, f"documents.jsonl line {number}"))


def _import_document(export: files.ExportArchive, context: ImportContext, record: files.Record) -> None:
    """One document through the usual upload path (indexing queued as for any upload); a document that
    cannot be imported is reported in the job's errors and the rest go on."""
    stable_id = record.stable_id()
    if context.known("document", stable_id):
        context.skip("documents")
        return
    member = record.text("file")
    try:
        if not member or member not in export.files:
            raise files.ImportInvalid("The export holds no file for this document.")
        title = record.text("title", limit=512) if record.data.get("title_given") else ""
        filename = record.text("filename", limit=255) or files.PurePosixPath(member).name
        document, _created = documents.document_upload(
            owner=context.owner, filename=filename, data=export.read(member), title=title
        )
    except DomainError as exc:
        context.job.errors.append({"kind": "document", "id": stable_id, "code": exc.code, "message": exc.message})
        return
    ImportedItem.objects.get_or_create(
        owner=context.owner,
        source=context.source,
        kind="document",
        stable_id=stable_id,
        defaults={"local_id": str(document.id), "job": context.job},
    )
    context.tick("documents", 1)


def _run_messages(job: ImportJob, stored: IO[bytes], tick: Callable[[str, int], None]) -> None:
    """A plain message list: one new conversation, once."""
    title, turns = files.message_list(stored.read())
    with transaction.atomic():
        item, created = ImportedItem.objects.select_for_update().get_or_create(
            owner=job.owner, source=job.source, kind="conversation", stable_id=job.source, defaults={"local_id": ""}
        )
        if not created:
            job.skipped = {"messages": len(turns)}
            return
        session = sessions.session_create(owner=job.owner, title=title, metadata={"imported_from": "openai-messages"})
        new = [sessions.NewMessage(t.role, t.content, t.created_at, t.metadata) for t in turns]
        sessions.message_bulk_create(session=session, messages=new)
        ImportedItem.objects.filter(pk=item.pk).update(local_id=str(session.id), job=job)
        tick("sessions", 1)
        tick("messages", len(turns))


def import_get(*, owner, import_id) -> ImportJob:
    try:
        return ImportJob.objects.get(owner=owner, pk=uuid.UUID(str(import_id)))
    except (ValueError, ImportJob.DoesNotExist) as exc:
        raise ImportNotFound() from exc


def import_status(*, job: ImportJob) -> dict[str, Any]:
    """What a person polls: the state, counts done and total by kind, and what went wrong."""
    done = job.done
    if job.state == ImportJob.State.RUNNING:
        with contextlib.suppress(RedisError):
            done = cache.get(PROGRESS_KEY.format(job.pk)) or done
    return {
        "import_id": str(job.id),
        "state": job.state,
        "kind": job.kind,
        "filename": job.filename,
        "total": sum(job.totals.values()),
        "done": sum(done.values()),
        "totals": job.totals,
        "counts": done,
        "skipped": job.skipped,
        "errors": job.errors,
        "created_at": job.created_at,
        "started_at": job.started_at,
        "finished_at": job.finished_at,
    }
