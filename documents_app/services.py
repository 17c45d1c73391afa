"""Writes of documents: upload, indexing into the node tree (with tiers and embeddings), reindex and
delete. Indexing builds the whole new tree first and swaps it in within one transaction, so a
document is never seen half-indexed, and never marked ready without its nodes."""

from __future__ import annotations

import contextlib
import errno
import hashlib
import logging
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import timedelta
from pathlib import PurePosixPath

from django.conf import settings
from django.core.files.base import ContentFile
from django.db import DatabaseError, IntegrityError, OperationalError, connection, transaction
from django.db.models import F, Q
from django.utils import timezone

from documents_app import parsing, sandbox, titles, tree
from documents_app.exceptions import DocumentNotFound, DocumentTooLarge, InvalidTitle, StorageFull, UnsupportedDocument
from documents_app.models import Document, DocumentNode
from documents_app.signals import document_deleted
from documents_app.uris import document_uri
from foundation import ai, task_names
from foundation.accounting import record_call
from foundation.ai import extractive
from foundation.ai.engines import abstract_of
from foundation.ai.tokens import tokens_for_chars
from foundation.push import push_on_commit
from foundation.queues import enqueue, enqueue_on_commit, queued_tasks_forget

logger = logging.getLogger(__name__)

CHUNK_OVERVIEW_WORDS, SECTION_OVERVIEW_WORDS, DOCUMENT_OVERVIEW_WORDS = 60, 100, 120
# Texts per call to the embedding model when indexing.
EMBED_BATCH = 64

# The event a person's open pages receive when one of their documents changes status.
DOCUMENT_EVENT = "document"
# The first key of the PostgreSQL advisory lock that runs claiming one person's documents take in turn
# (the second is the person's id), so two runs cannot both see that person's indexing slots as free.
OWNER_INDEX_LOCK = 0x5245  # "RE"
# The longest a document waiting for its owner's turn goes without looking again.
DOCUMENT_INDEX_DEFER_MAX_S = 60.0


def _status_of(document_id) -> dict:
    row = (
        Document.objects.filter(pk=document_id)
        .values("id", "owner_id", "title", "filename", "status", "error", "node_count")
        .first()
    )
    if row is None:
        return {"doc_id": str(document_id), "status": "deleted", "error": ""}
    return {
        "doc_id": str(row["id"]),
        "title": row["title"] or row["filename"],
        "status": row["status"],
        "error": row["error"],
        "node_count": row["node_count"],
    }


def document_announce(*, document_id, owner_id: int) -> None:
    """Tells the owner's open pages the document's status as committed (pending, indexing, ready,
    failed or deleted), so the documents page follows it without polling."""
    push_on_commit(owner_id, DOCUMENT_EVENT, lambda: _status_of(document_id))


def document_upload(
    *, owner, filename: str, data: bytes, title: str = "", enqueue: bool = True
) -> tuple[Document, bool]:
    """Stores an upload and queues its indexing; returns the document and whether it is new.

    Refused at once: a file over DOCUMENT_MAX_BYTES, an empty one, a type this product does not read,
    or a name claiming another type than the content has. The same bytes uploaded again by the same
    user return the document already made from them; if that one failed, it is indexed again, under
    the new name (which may be the fix: a .md that had been named .txt). With ``enqueue=False`` the
    caller indexes it itself.
    """
    if len(data) > settings.DOCUMENT_MAX_BYTES:
        raise DocumentTooLarge(
            f"The file is {len(data)} bytes; the limit is {settings.DOCUMENT_MAX_BYTES}.",
            details={"limit_bytes": settings.DOCUMENT_MAX_BYTES},
        )
    filename = PurePosixPath(filename or "upload").name[:255] or "upload"
    try:
        media_type = parsing.detect(data, filename)
    except parsing.ParseError as exc:
        raise UnsupportedDocument(str(exc)) from exc
    digest = hashlib.sha256(data).hexdigest()
    existing = Document.objects.filter(owner=owner, content_hash=digest).first()
    if existing is not None:
        if existing.status != Document.Status.FAILED:
            return existing, False
        return _upload_again(existing, filename=filename, media_type=media_type, enqueue=enqueue), True
    given = titles.tidy(title)
    document = Document(
        owner=owner,
        title=given,
        title_given=bool(given),
        filename=filename,
        media_type=media_type,
        size_bytes=len(data),
        content_hash=digest,
    )
    document.uri = document_uri(owner.id, document.id)
    # Named after the document, not its bytes: two users' identical files never share a name, so the
    # name asked for is the name written, and a failed write can be cleaned up by it.
    stored_name = f"{document.id}{PurePosixPath(filename).suffix.lower()}"
    try:
        with transaction.atomic():
            document.file.save(stored_name, ContentFile(data), save=False)
            document.save()
            document_announce(document_id=document.id, owner_id=owner.id)
            if enqueue:
                enqueue_on_commit(task_names.DOCUMENT_INDEX, str(document.id))
    except Exception as exc:
        # The row was rolled back; the file, partly or wholly written, must not outlive it.
        _discard_file(document, stored_name)
        if isinstance(exc, IntegrityError):  # the same bytes, uploaded twice at once
            return Document.objects.get(owner=owner, content_hash=digest), False
        if is_disk_full(exc):
            raise StorageFull() from exc
        raise
    return document, True


def _upload_again(document: Document, *, filename: str, media_type: str, enqueue: bool) -> Document:
    """A failed document's bytes uploaded again: indexed again, under the name they came with now."""
    Document.objects.filter(pk=document.pk).update(
        filename=filename,
        media_type=media_type,
        status=Document.Status.PENDING,
        error="",
        index_attempts=0,
        updated_at=timezone.now(),
    )
    document.refresh_from_db()
    document_announce(document_id=document.id, owner_id=document.owner_id)
    if enqueue:
        enqueue_on_commit(task_names.DOCUMENT_INDEX, str(document.id))
    return document


def _discard_file(document: Document, stored_name: str) -> None:
    name = document.file.name or document.file.field.generate_filename(document, stored_name)
    with contextlib.suppress(OSError):
        document.file.storage.delete(name)


def is_disk_full(exc: BaseException) -> bool:
    """Whether ``exc`` says a disk is full: the media disk (ENOSPC, or a quota: EDQUOT) or
    PostgreSQL's (SQLSTATE 53100, disk_full)."""
    if isinstance(exc, OSError):
        return exc.errno in (errno.ENOSPC, errno.EDQUOT)
    return isinstance(exc, OperationalError) and getattr(exc.__cause__, "sqlstate", None) == "53100"


def document_reindex(*, document: Document) -> Document:
    Document.objects.filter(pk=document.pk).update(status=Document.Status.PENDING, error="", index_attempts=0)
    document.refresh_from_db()
    document_announce(document_id=document.id, owner_id=document.owner_id)
    enqueue_on_commit(task_names.DOCUMENT_INDEX, str(document.id))
    return document


def _carries_title(node: DocumentNode) -> bool:
    """Whether a node is titled after its document: the document's own node, and the chunks of the text
    before its first heading."""
    return node.level == 0 or (node.level == 1 and node.kind == DocumentNode.Kind.CHUNK)


def _title_carriers(document_id):
    """The nodes of a document that ``_carries_title``, as a query."""
    return DocumentNode.objects.filter(document_id=document_id).filter(
        Q(level=0) | Q(level=1, kind=DocumentNode.Kind.CHUNK)
    )


def document_rename(*, document: Document, title: str) -> Document:
    """A person names the document. The name shows at once wherever the document does: the document,
    its own node's title and abstract, and so what search matches on; the vectors of the nodes that
    carry it are made again in a worker. The file is not indexed again, and indexing keeps the name."""
    title = titles.tidy(title)
    if not title:
        raise InvalidTitle(details={"fields": {"title": ["must have at least one visible character."]}})
    with transaction.atomic():
        # The same row lock as the index swap: a rename never interleaves with a new tree going in.
        current = Document.objects.select_for_update().filter(pk=document.pk).first()
        if current is None:
            raise DocumentNotFound()
        if current.title == title and current.title_given:
            return current
        Document.objects.filter(pk=current.pk).update(title=title, title_given=True)
        root = DocumentNode.objects.filter(document_id=current.pk, level=0).only("id", "title", "abstract").first()
        if root is not None:
            old, new = extractive.abstract_title(root.title), extractive.abstract_title(title)
            if old and root.abstract.startswith(f"{old}:"):
                # The extractive abstract names the document first ("<title>: what it covers.").
                DocumentNode.objects.filter(pk=root.pk).update(abstract=new + root.abstract[len(old) :])
            _title_carriers(current.pk).update(title=title)
            enqueue_on_commit(task_names.DOCUMENT_EMBED_TITLE, str(current.pk))
        document_announce(document_id=current.pk, owner_id=current.owner_id)
    current.refresh_from_db()
    return current


def document_embed_title(*, document_id) -> int:
    """Makes again the vectors of the nodes that carry the document's title, where the title they were
    made with is not the one they show; returns how many. A rename meanwhile leaves its own job."""
    stale = []
    for row in _title_carriers(document_id).defer("embedding").order_by("id"):
        text = _embedding_text(title=row.title, kind=row.kind, text=row.content, overview=row.overview)
        if row.content_hash != _hash(text):
            stale.append((row, text))
    done = 0
    for start in range(0, len(stale), EMBED_BATCH):
        batch = stale[start : start + EMBED_BATCH]
        vectors, model = ai.embed_texts(
            [text for _, text in batch], purpose="document_embedding", owner_id=batch[0][0].owner_id
        )
        with transaction.atomic():
            for (row, text), vector in zip(batch, vectors, strict=True):
                done += DocumentNode.objects.filter(pk=row.pk, title=row.title).update(
                    embedding=vector, embedding_model=model, content_hash=_hash(text)
                )
    return done


@transaction.atomic
def document_delete(*, document: Document) -> None:
    """Deletes the document, every node and vector of it, and its file. (Whatever else refers to it,
    such as search traces, lets go of it on the ``document_deleted`` signal, in this transaction.)"""
    # The same row lock as the index swap: a delete waits for a swap in flight, never interleaves.
    if not Document.objects.select_for_update().filter(pk=document.pk).exists():
        return
    document_deleted.send(sender=Document, document_id=document.id, owner_id=document.owner_id)
    queued_tasks_forget(tasks=task_names.DOCUMENT_JOBS, first_arg=str(document.id))
    document_announce(document_id=document.id, owner_id=document.owner_id)
    stored = document.file.name
    storage = document.file.storage
    document.delete()
    if stored:
        transaction.on_commit(lambda: storage.delete(stored))


# --- Indexing -----------------------------------------------------------------------------------------


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _embedding_text(*, title: str, kind: str, text: str, overview: str) -> str:
    """What a node's vector is made from: its title, with a chunk's text or a directory's overview as
    the text says it (without the framing its readers get: "It says to ...")."""
    body = text if kind == DocumentNode.Kind.CHUNK else extractive.as_said(overview)
    return f"{title}\n{body}" if title else body


def _draft_text(node: tree.Draft, overview: str) -> str:
    return _embedding_text(title=node.title, kind=node.kind, text=node.text, overview=overview)


def indexing_stale_after() -> timedelta:
    """How long a claim on a document may go unrefreshed before its run counts as dead."""
    return timedelta(seconds=settings.DOCUMENT_INDEX_STALE_S)


def document_claim_expires_in(*, document: Document) -> float:
    """Seconds until the claim another run holds on ``document`` goes stale (0 if it already has)."""
    expires = document.updated_at + indexing_stale_after()
    return max(0.0, (expires - timezone.now()).total_seconds())


@contextmanager
def _claim_kept(document_id) -> Iterator[None]:
    """Refreshes the claim on a document while the block runs, from a thread of its own, so a run busy
    in one long call (a model, a large parse) still shows it is alive, and a run whose process died
    stops refreshing it at once."""
    stop = threading.Event()

    def beat() -> None:
        try:
            while not stop.wait(settings.DOCUMENT_INDEX_HEARTBEAT_S):
                try:
                    Document.objects.filter(pk=document_id, status=Document.Status.INDEXING).update(
                        updated_at=timezone.now()
                    )
                except DatabaseError:  # the database restarting: the next beat tries again
                    logger.warning("could not refresh the indexing claim of document %s", document_id, exc_info=True)
        finally:
            connection.close()  # this thread's own connection

    thread = threading.Thread(target=beat, name=f"claim-{document_id}", daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def document_index(
    *, document_id, engine: ai.TextEngine | None = None, redo_finished: bool = True, fair: bool = False
) -> Document | None:
    """Parses, tiers, embeds and stores a document's tree, replacing the previous one in one step.

    Idempotent: running it again (a retry after a worker died) builds the same tree. A file that
    cannot be read marks the document failed with the reason; an embedding failure raises
    ``ai.EmbeddingError`` for the task to retry, leaving the document as it was. A document another
    live run is indexing is returned as it is, still "indexing". With ``redo_finished=False`` (a queued
    job delivered again after its document was done) a ready or failed document is left as it is too.
    With ``fair=True`` (the worker's job) a document whose owner already has as many others being indexed
    as one person may (``_owner_busy``) is left "pending", for the job to come back to later. A document
    whose runs were cut short DOCUMENT_INDEX_MAX_ATTEMPTS times fails instead of being indexed again by a
    job (a run asked for with ``redo_finished`` counts afresh).
    """
    document = Document.objects.filter(pk=document_id).first()
    if document is None:
        return None  # deleted meanwhile
    now = timezone.now()
    # Claim the work: one run at a time per document, unless the running one is gone (a worker that
    # died mid-run stops refreshing its claim, which goes stale and may be taken over).
    claimable = Document.objects.filter(pk=document.pk).exclude(
        status=Document.Status.INDEXING, updated_at__gt=now - indexing_stale_after()
    )
    if not redo_finished:
        claimable = claimable.exclude(status__in=[Document.Status.READY, Document.Status.FAILED])
    with transaction.atomic():
        if fair and _owner_busy(document, now=now):
            return Document.objects.filter(pk=document.pk).first()  # "pending" (or done meanwhile)
        # A run asked for by hand (``redo_finished``: manage.py reindex, ingest) starts the count afresh.
        attempts = 1 if redo_finished else F("index_attempts") + 1
        claimed = claimable.update(status=Document.Status.INDEXING, error="", updated_at=now, index_attempts=attempts)
    if not claimed:
        logger.info("document %s is %s; this run leaves it", document.pk, document.status)
        return Document.objects.filter(pk=document.pk).first()
    attempts = Document.objects.filter(pk=document.pk).values_list("index_attempts", flat=True).first() or 0
    if attempts > settings.DOCUMENT_INDEX_MAX_ATTEMPTS:
        return document_fail(document_id=document.pk, reason=attempts_used_up_reason())
    document_announce(document_id=document.pk, owner_id=document.owner_id)
    with _claim_kept(document.pk):
        built = _document_build(document, engine=engine)
    if fair:
        _turn_passed(owner_id=document.owner_id, after=document.pk)
    return built


def _owner_busy(document: Document, *, now) -> bool:
    """Whether the document's owner already has as many documents being indexed (by live runs) as one
    person may (DOCUMENT_INDEX_PER_USER, or for a short document while nobody else's waits,
    DOCUMENT_INDEX_PER_USER_WHEN_IDLE), under a lock that other runs claiming that person's documents
    wait for, until the caller's transaction ends."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_advisory_xact_lock(%s, %s)", [OWNER_INDEX_LOCK, document.owner_id])
    running = (
        Document.objects.filter(
            owner_id=document.owner_id, status=Document.Status.INDEXING, updated_at__gt=now - indexing_stale_after()
        )
        .exclude(pk=document.pk)
        .count()
    )
    if running < settings.DOCUMENT_INDEX_PER_USER:
        return False
    # A short text may go ahead beyond the person's share while nobody else's document waits: the other
    # bulk processes would idle meanwhile, and should someone upload now, they wait for a short text at
    # most (seconds), never for a manual. Only text: a PDF or DOCX of a few kilobytes may unpack to
    # megabytes and take its whole reading budget.
    return (
        running >= settings.DOCUMENT_INDEX_PER_USER_WHEN_IDLE
        or not document.media_type.startswith("text/")
        or document.size_bytes > settings.DOCUMENT_INDEX_SHORT_BYTES
        or Document.objects.filter(status=Document.Status.PENDING).exclude(owner_id=document.owner_id).exists()
    )


def _turn_passed(*, owner_id: int, after) -> None:
    """Hands the owner's turn to their next waiting document at once: its job is queued now, behind
    everyone else's already queued, rather than the worker idling until the waiting document's own job
    comes back to look (``document_turn_in``)."""
    waiting = (
        Document.objects.filter(owner_id=owner_id, status=Document.Status.PENDING)
        .exclude(pk=after)
        .order_by("created_at", "pk")
        .values_list("pk", flat=True)
        .first()
    )
    if waiting is not None:
        enqueue(task_names.DOCUMENT_INDEX, str(waiting))


def document_turn_in(*, document: Document) -> float:
    """Seconds until a document left waiting for its owner's turn should look again: the further back in
    that person's line it is, the longer (up to DOCUMENT_INDEX_DEFER_MAX_S), so that a person with a
    thousand documents waiting costs the workers a few looks a second, not hundreds."""
    ahead = Document.objects.filter(
        owner_id=document.owner_id, status=Document.Status.PENDING, created_at__lt=document.created_at
    ).count()
    return min(settings.DOCUMENT_INDEX_DEFER_S * (1 + ahead), DOCUMENT_INDEX_DEFER_MAX_S)


def attempts_used_up_reason() -> str:
    """Why a document whose indexing runs were cut short too often is not indexed again, for a person."""
    return (
        f"Indexing was cut short {settings.DOCUMENT_INDEX_MAX_ATTEMPTS} times (the process indexing it was "
        "killed: out of memory, over the time limit, or stopped), so it is not tried again. If it is a real "
        "document, split it into smaller parts or save it again as a plain PDF or DOCX, then upload it; to try "
        "it as it is once more, reindex it."
    )


def time_limit_reason() -> str:
    """Why a document whose indexing ran over its time limit failed, for a person."""
    minutes = settings.DOCUMENT_INDEX_TIME_LIMIT_S / 60
    return (
        f"Indexing took longer than {minutes:g} minutes and was stopped. If it is a real document, split it into "
        "smaller parts and upload those."
    )


def parse_limits() -> parsing.Limits:
    """What one file may hold, from the settings."""
    return parsing.Limits(
        pdf_max_pages=settings.DOCUMENT_PDF_MAX_PAGES,
        pdf_max_content_bytes=settings.DOCUMENT_PDF_MAX_CONTENT_MB * parsing.MB,
        max_text_chars=settings.DOCUMENT_MAX_TEXT_CHARS,
        docx_max_xml_bytes=settings.DOCUMENT_DOCX_MAX_XML_MB * parsing.MB,
        docx_max_part_xml_bytes=settings.DOCUMENT_DOCX_MAX_PART_MB * parsing.MB,
    )


def parse_budget() -> sandbox.Budget:
    """What reading one file may spend, from the settings."""
    return sandbox.Budget(
        cpu_s=settings.DOCUMENT_PARSE_CPU_S,
        wall_s=settings.DOCUMENT_PARSE_WALL_S,
        memory_bytes=settings.DOCUMENT_PARSE_MEMORY_MB * parsing.MB,
    )


def _parse(document: Document) -> tuple[parsing.Parsed, tree.Draft, str]:
    """The document's file read into its tree, under the title it goes by. Raises ``ParseError`` or
    ``OSError`` for a file that cannot be read."""
    with document.file.open("rb") as handle:
        data = handle.read()
    parsed = sandbox.parse_isolated(data, document.filename, limits=parse_limits(), budget=parse_budget())
    title = document.title if document.title_given else parsed.title
    root = tree.build_tree(
        uri=document.uri,
        title=title,
        blocks=parsed.blocks,
        chunk_tokens=settings.CHUNK_TOKENS,
        overlap_tokens=settings.CHUNK_OVERLAP_TOKENS,
    )
    return parsed, root, title


def _document_build(document: Document, *, engine: ai.TextEngine | None) -> Document | None:
    started = time.perf_counter()
    try:
        parsed, root, title = _parse(document)
    except (parsing.ParseError, OSError) as exc:
        return document_fail(document_id=document.pk, reason=str(exc))
    except Exception as exc:  # a library choking on a malformed file: say so, never hang in "indexing"
        logger.exception("could not read document %s", document.pk)
        return document_fail(document_id=document.pk, reason=f"The file could not be read ({type(exc).__name__}).")
    engine = engine or ai.text_engine()
    tiers = _tiers(root, engine=engine, owner_id=document.owner_id)
    if engine.backend == "extractive":  # an LLM engine records each of its calls itself
        record_call(
            kind="generation",
            purpose="document_tiers",
            backend="extractive",
            model="extractive",
            started=started,
            owner_id=document.owner_id,
            input_count=len(tiers),
            input_tokens=tokens_for_chars(parsed.text_length),
        )
    nodes = list(tree.walk(root))
    overviews = {uri: overview for uri, (_abstract, overview) in tiers.items()}
    try:
        vectors, model = _embeddings(document, nodes, overviews)
    except ai.EmbeddingError as exc:
        # Give the claim back so the task's retry can take it; the error says what it waits for.
        Document.objects.filter(pk=document.pk).update(
            status=Document.Status.PENDING,
            error=f"Waiting to retry: {exc}",
            index_attempts=0,
            updated_at=timezone.now(),
        )
        document_announce(document_id=document.pk, owner_id=document.owner_id)
        raise
    rows = [
        DocumentNode(
            document=document,
            owner_id=document.owner_id,
            uri=node.uri,
            parent_uri=node.parent_uri,
            kind=node.kind,
            level=node.depth,
            position=node.position,
            title=node.title[: titles.MAX_TITLE_CHARS],
            abstract=tiers[node.uri][0],
            overview=tiers[node.uri][1],
            content=node.text,
            overlap_chars=node.overlap,
            content_hash=_hash(_draft_text(node, overviews[node.uri])),
            token_count=ai.estimate_tokens(node.text),
            embedding=vectors[index],
            embedding_model=model,
        )
        for index, node in enumerate(nodes)
    ]
    return _swap_in(document, rows, title=title)


def _swap_in(document: Document, rows: list[DocumentNode], *, title: str) -> Document | None:
    """Replaces the document's tree with ``rows`` and marks it ready, in one transaction. A document
    renamed while it was being indexed keeps its new name, on its nodes too."""
    with transaction.atomic():
        current = Document.objects.select_for_update().filter(pk=document.pk).values("title", "title_given").first()
        if current is None:
            return None  # deleted while indexing: nothing to store
        renamed = current["title_given"] and current["title"] != title
        if renamed:
            title = current["title"]
            for row in rows:
                if _carries_title(row):
                    row.title = title
        DocumentNode.objects.filter(document=document).delete()
        DocumentNode.objects.bulk_create(rows, batch_size=500)
        Document.objects.filter(pk=document.pk).update(
            status=Document.Status.READY,
            error="",
            index_attempts=0,
            node_count=len(rows),
            indexed_at=timezone.now(),
            title=title[: titles.MAX_TITLE_CHARS],
        )
        document_announce(document_id=document.pk, owner_id=document.owner_id)
        if renamed:
            enqueue_on_commit(task_names.DOCUMENT_EMBED_TITLE, str(document.pk))
    document.refresh_from_db()
    return document


def _announce_by_id(document_id) -> None:
    owner_id = Document.objects.filter(pk=document_id).values_list("owner_id", flat=True).first()
    if owner_id is not None:
        document_announce(document_id=document_id, owner_id=owner_id)


def document_fail(*, document_id, reason: str) -> Document | None:
    Document.objects.filter(pk=document_id).update(
        status=Document.Status.FAILED, error=reason[:2000], index_attempts=0, updated_at=timezone.now()
    )
    document = Document.objects.filter(pk=document_id).first()
    if document is not None:
        document_announce(document_id=document.pk, owner_id=document.owner_id)
    return document


def documents_rescue_stalled() -> list:
    """Queues again every document whose indexing run died (its claim went stale: a killed worker, a
    machine that went down); returns their ids.

    The job of a killed worker may stay with the broker for hours before it is handed out again; this
    does not wait for it. Each document is set back to "pending" first, with a condition on its stale
    claim, so rescuers running at once queue it only once; one that cannot be queued (the broker is
    down) is left as it was, for the next round. One whose runs were cut short DOCUMENT_INDEX_MAX_ATTEMPTS
    times already fails instead, saying why.
    """
    now = timezone.now()
    stale = Document.objects.filter(status=Document.Status.INDEXING, updated_at__lte=now - indexing_stale_after())
    rescued = []
    for document_id, claimed_at, attempts in stale.values_list("pk", "updated_at", "index_attempts"):
        taken = Document.objects.filter(pk=document_id, status=Document.Status.INDEXING, updated_at=claimed_at)
        if attempts >= settings.DOCUMENT_INDEX_MAX_ATTEMPTS:
            failed = {"status": Document.Status.FAILED, "error": attempts_used_up_reason(), "index_attempts": 0}
            if taken.update(**failed, updated_at=now):
                logger.warning("document %s was cut short %d times; failed", document_id, attempts)
                _announce_by_id(document_id)
            continue
        if not taken.update(status=Document.Status.PENDING, updated_at=now):
            continue  # another run or rescuer got there first
        if enqueue(task_names.DOCUMENT_INDEX, str(document_id)):
            logger.warning("document %s was left indexing by a run that died; queued again", document_id)
            rescued.append(document_id)
        else:
            Document.objects.filter(pk=document_id, status=Document.Status.PENDING, updated_at=now).update(
                status=Document.Status.INDEXING, updated_at=claimed_at
            )
    return rescued


def _whole(root: tree.Draft) -> list[tree.Draft]:
    """The document and the headings that hold all of it ("# Aurora K3 Kettle Manual" over every section),
    outermost first: each is the whole text under another name."""
    whole = [root]
    while len(whole[-1].children) == 1 and whole[-1].children[0].kind != "chunk":
        whole.append(whole[-1].children[0])
    return whole


def _opening(node: tree.Draft, tiers: dict[str, tuple[str, str]]) -> str:
    """The abstract of the text a document opens with (before its first heading, or under the one
    heading that holds all of it), or "" if it opens with a heading."""
    node = _whole(node)[-1]
    first = node.children[0] if node.children else None
    return tiers[first.uri][0] if first is not None and first.kind == "chunk" else ""


def _tiers(root: tree.Draft, *, engine: ai.TextEngine, owner_id: int) -> dict[str, tuple[str, str]]:
    """(L0, L1) of every node. L1: a chunk's from its text, a directory's from its children's. L0: a
    model's overview opens with what the node is about, so its first statement is the abstract; the
    extractive engine's quotes the text, so a directory's abstract is its title with its most telling
    statement (a document's, and a heading's that holds all of it: the statement it opens with), and a
    chunk's is its most informative one."""
    tiers: dict[str, tuple[str, str]] = {}
    whole = {node.uri for node in _whole(root)}

    def visit(node: tree.Draft) -> str:
        if node.kind == "chunk":
            overview = engine.describe([node.text], max_words=CHUNK_OVERVIEW_WORDS, owner_id=owner_id)
        else:
            parts = [visit(child) for child in node.children]
            words = DOCUMENT_OVERVIEW_WORDS if node.kind == "document" else SECTION_OVERVIEW_WORDS
            overview = engine.describe(parts, max_words=words, owner_id=owner_id) if parts else node.title
        if engine.generates or node.kind == "chunk":
            abstract = abstract_of(overview)
        else:
            opening = _opening(node, tiers) if node.uri in whole else ""
            abstract = abstract_of(overview, title=node.title, opening=opening)
        tiers[node.uri] = (abstract, overview)
        return overview

    visit(root)
    return tiers


def _embeddings(document: Document, nodes: Sequence[tree.Draft], overviews: dict[str, str]):
    """Vectors for every node, in batches; a node whose text is unchanged keeps its vector."""
    model = ai.active_embedding_model()
    previous = dict(
        DocumentNode.objects.filter(document=document, embedding_model=model, embedding__isnull=False).values_list(
            "content_hash", "embedding"
        )
    )
    texts = [_draft_text(node, overviews[node.uri]) for node in nodes]
    vectors = [previous.get(_hash(text)) for text in texts]
    missing = [index for index, vector in enumerate(vectors) if vector is None]
    for start in range(0, len(missing), EMBED_BATCH):
        batch = missing[start : start + EMBED_BATCH]
        made, model = ai.embed_texts(
            [texts[i] for i in batch], purpose="document_embedding", owner_id=document.owner_id
        )
        for index, vector in zip(batch, made, strict=True):
            vectors[index] = vector
    return [list(v) if v is not None else None for v in vectors], model
