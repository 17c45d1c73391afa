"""Warming a process up as it starts, so that the first person after a start does not pay for it: the
embedding model loaded and run once (its first run costs about a second), the text engine's client loaded
(litellm's first streamed answer costs about three seconds of CPU), a database connection opened,
each vector index walked once (its entry points read into memory), and, where the database's files are on
this machine (the embedded PostgreSQL), the files of the vector and full-text indexes read ahead into the
operating system's cache, from which PostgreSQL then reads them without touching the disk; the apps'
task modules imported (the first job a process queues would otherwise cost it a second of processor); and,
last, what the process then holds set aside from Python's collector (``collector_settle``).

Web processes warm up in a thread of their own as they start (``config.asgi``), without delaying their
first answer; worker processes as they fork (``foundation.tasks``). WARM_UP_AT_START turns it off.
"""

from __future__ import annotations

import gc
import logging
import os
import threading
import time

from django.conf import settings
from django.db import connection

from foundation.ai import implications_asked
from foundation.ai.embeddings import embedding_backend
from foundation.ai.engines import text_engine
from foundation.db import release_database_connections
from foundation.embedding import embeddables
from foundation.queues import tasks_register
from foundation.vectors import cosine_to

logger = logging.getLogger(__name__)

# How often Python's collector looks for garbage, once a process is warm: after this many new objects (not
# 700, its default), and the older generations after 20 of the younger one's collections (not 10). A turn
# makes tens of thousands of objects and keeps almost none of them.
COLLECTOR_THRESHOLDS = (10_000, 20, 20)

# The index methods whose files are read ahead.
WARMED_INDEX_METHODS = ("hnsw", "gin")
_INDEX_FILES_SQL = (
    "SELECT pg_relation_filepath(c.oid) FROM pg_class c JOIN pg_am am ON am.oid = c.relam"
    " WHERE c.relkind = 'i' AND am.amname = ANY(%s)"
)


def model_warm() -> list[float]:
    """Loads the embedding model and runs it once, and embeds what kinds of facts mean (asked of every
    question about the person's memories); a vector to walk the indexes with."""
    backend = embedding_backend()
    vector = backend.embed(["warming up"]).vectors[0]
    implications_asked(vector, backend.name)
    return vector


def indexes_warm(vector: list[float]) -> int:
    """Walks each vector index once, and reads ahead the index files the database keeps on this machine;
    how many files were read ahead."""
    model = embedding_backend().name
    for spec in embeddables():
        rows = spec.rows().filter(embedding_model=model).only("pk")
        list(rows.order_by(cosine_to(vector))[:1])
    with connection.cursor() as cursor:
        cursor.execute("SHOW data_directory")
        data_directory = cursor.fetchone()[0]
        cursor.execute(_INDEX_FILES_SQL, [list(WARMED_INDEX_METHODS)])
        paths = [os.path.join(data_directory, row[0]) for row in cursor.fetchall() if row[0]]
    return sum(_read_ahead(path) for path in paths)


def _read_ahead(path: str) -> int:
    """Asks the operating system to read a file (and its 1 GB segments) into its cache; 0 where it cannot
    (a database on another machine, or files this user may not read)."""
    read = 0
    for segment in [path, *(f"{path}.{n}" for n in range(1, 64))]:
        try:
            descriptor = os.open(segment, os.O_RDONLY)
        except OSError:
            break
        try:
            os.posix_fadvise(descriptor, 0, 0, os.POSIX_FADV_WILLNEED)
            read = 1
        finally:
            os.close(descriptor)
    return read


def collector_settle() -> int:
    """Sets what a warmed-up process holds (modules, the model, Django's and the apps' caches) aside from
    Python's collector, which then looks for garbage less often; how many objects were set aside.

    A full collection walks every object the process holds: some 180,000 once warm, about 120 ms in which
    the process answers nobody, and it came every twenty turns or so. Afterwards a full collection walks only
    what was made since, and a young one about 2 ms."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*COLLECTOR_THRESHOLDS)
    return gc.get_freeze_count()


def warm_up() -> dict:
    """Warms this process up; what it did and how long it took. A failure is logged, never raised: a
    cold start is slower, not broken."""
    started = time.perf_counter()
    done: dict = {}
    try:
        vector = model_warm()
        done["model_ms"] = round((time.perf_counter() - started) * 1000)
        done["index_files"] = indexes_warm(vector)
    except Exception:
        logger.warning("warming up failed; the first requests will be slower", exc_info=True)
    finally:
        release_database_connections()
    engine_started = time.perf_counter()
    try:
        text_engine().warm()
        done["engine_ms"] = round((time.perf_counter() - engine_started) * 1000)
    except Exception:  # a model name litellm cannot map, say: the first answer will say so itself
        logger.warning("warming up the text engine failed; the first answer will be slower", exc_info=True)
    try:
        done["tasks"] = tasks_register()
    except Exception:  # a broken task module: the first job queued will say so itself
        logger.warning("importing the task modules failed", exc_info=True)
    done["settled_objects"] = collector_settle()
    done["ms"] = round((time.perf_counter() - started) * 1000)
    logger.info("warmed up in %d ms: %s", done["ms"], done)
    return done


# Set while this process warms up in the background: its health check says so (``warm_status``), and the
# run command says the site is ready only once every web process has warmed up.
_warming = threading.Event()
_warming_since = 0.0
# A warm-up still running after this long no longer holds the process out: one that hangs (a hosted
# embedding model that does not answer) must not keep it out of a balancer's rotation for good.
WARMING_HELD_S = 120.0


def warm_status() -> dict:
    """Whether this process has finished warming up (a process that does not warm up is as warm as it
    gets, and one still at it after WARMING_HELD_S counts as warm): the health check's ``warm``."""
    held = _warming.is_set() and time.monotonic() - _warming_since < WARMING_HELD_S
    return {"ok": not held}


def warm_up_in_background() -> threading.Thread | None:
    """Starts ``warm_up`` in a thread of its own, when WARM_UP_AT_START is on."""
    global _warming_since
    if not settings.WARM_UP_AT_START:
        return None

    def warming() -> None:
        try:
            warm_up()
        finally:
            _warming.clear()

    thread = threading.Thread(target=warming, name="warm-up", daemon=True)
    _warming_since = time.monotonic()
    _warming.set()
    try:
        thread.start()
    except BaseException:
        _warming.clear()
        raise
    return thread
