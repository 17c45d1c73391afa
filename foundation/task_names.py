"""The names the Celery tasks are registered, routed and queued under: one place for each.

A name is a contract beyond this code: it travels in broker messages and is stored in ``QueuedTask``
rows while the broker is down, so a task is never renamed, only added. Each task is registered with
``@shared_task(name=...)`` from this module, routes and the supervisor send by these constants, and
``tests/foundation/test_task_names.py`` checks that every name here and every routed name is a registered task.
"""

# Sessions (sessions_app.tasks): commit a session whose live turns reached AUTO_COMMIT_TURNS; fold its
# older turns into the rolling summary.
SESSION_AUTO_COMMIT = "sessions.auto_commit"
SESSION_FOLD_HISTORY = "sessions.fold_history"
# The same after a bulk write (an import, a long history posted at once), on the bulk workers: committing
# and summarising thousands of imported turns would otherwise hold the workers people's new turns wait on.
SESSION_AUTO_COMMIT_BULK = "sessions.auto_commit_bulk"
SESSION_FOLD_HISTORY_BULK = "sessions.fold_history_bulk"

# Documents (documents_app.tasks): index one; queue again those whose indexing run died; embed again the
# nodes that carry a renamed document's title.
DOCUMENT_INDEX = "documents.index_document"
DOCUMENTS_RESCUE_STALLED = "documents.rescue_stalled"
DOCUMENT_EMBED_TITLE = "documents.embed_title"

# The foundation (foundation.tasks): embed rows of one kind; embed every row still without a
# vector; send the jobs kept in the database while the broker was down. (Their "core." is the name of
# their first home, kept like every name.)
EMBED_ROWS = "core.embed_rows"
# The same for rows written in bulk (an import, a long history posted at once), on the bulk workers.
EMBED_ROWS_BULK = "core.embed_rows_bulk"
BACKFILL_EMBEDDINGS = "core.backfill_embeddings"
SEND_QUEUED_TASKS = "core.send_queued_tasks"

# Export and import (privacy_app.tasks): import an uploaded export into a person's account.
IMPORT_RUN = "privacy.import_run"

# Retrieval (retrieval_app.tasks): delete the search traces older than SEARCH_TRACE_RETENTION_DAYS.
SEARCH_TRACES_PRUNE = "retrieval.prune_traces"

# Bulk work, on workers of its own so that it never delays what a person is waiting for.
BULK_TASKS = frozenset(
    {
        DOCUMENT_INDEX,
        BACKFILL_EMBEDDINGS,
        IMPORT_RUN,
        EMBED_ROWS_BULK,
        SESSION_AUTO_COMMIT_BULK,
        SESSION_FOLD_HISTORY_BULK,
        SEARCH_TRACES_PRUNE,
    }
)

# The jobs that name one session, or one document, by its id as their first argument: a delete drops
# those still kept in the database for it (``foundation.queues.queued_tasks_forget``).
SESSION_JOBS = frozenset(
    {SESSION_AUTO_COMMIT, SESSION_FOLD_HISTORY, SESSION_AUTO_COMMIT_BULK, SESSION_FOLD_HISTORY_BULK}
)
DOCUMENT_JOBS = frozenset({DOCUMENT_INDEX, DOCUMENT_EMBED_TITLE})
# The jobs that embed rows of a kind: (kind, ids).
EMBED_JOBS = frozenset({EMBED_ROWS, EMBED_ROWS_BULK})

ALL_TASKS = frozenset(
    {
        SESSION_AUTO_COMMIT,
        SESSION_FOLD_HISTORY,
        SESSION_AUTO_COMMIT_BULK,
        SESSION_FOLD_HISTORY_BULK,
        DOCUMENT_INDEX,
        DOCUMENTS_RESCUE_STALLED,
        DOCUMENT_EMBED_TITLE,
        EMBED_ROWS,
        EMBED_ROWS_BULK,
        BACKFILL_EMBEDDINGS,
        SEND_QUEUED_TASKS,
        IMPORT_RUN,
        SEARCH_TRACES_PRUNE,
    }
)
