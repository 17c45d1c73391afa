"""Writes of sessions and memory, one module per sub-domain; each function owns its transaction, and
workers are queued only after the rows they need are committed.

- ``sessions``: create, rename, delete, and the locks every session write relies on;
- ``messages``: recording turns as given (no model is called);
- ``commit``: live turns into an archive (L0/L1) and long-term memories;
- ``memories``: extraction from what people said, merged by (category, key) with history, at commit
  and, by the built-in patterns, as each chat turn is said; and the memories a person adds, corrects or
  forgets by hand;
- ``history``: the rolling summary that keeps a model's view of a session bounded;
- ``working_set``: what a session is currently about, shared by every process through Redis;
- ``context``: what a search inside a session is handed of it (its query embedded first).
"""

from sessions_app.services.commit import CommitResult, session_commit
from sessions_app.services.context import SearchContext, session_search_context
from sessions_app.services.history import FOLD_BATCH, HistoryContext, session_history_context
from sessions_app.services.memories import (
    memory_create,
    memory_delete,
    memory_edit,
    memory_extract_and_upsert,
    memory_note_from_turn,
    memory_upsert,
)
from sessions_app.services.messages import (
    NewMessage,
    message_bulk_create,
    message_exchange_replace,
    message_jobs_requeue,
)
from sessions_app.services.sessions import session_create, session_delete, session_update
from sessions_app.services.working_set import (
    MAX_SECTIONS,
    WorkingSet,
    working_set_clear,
    working_set_get,
    working_set_lifetime_s,
    working_set_update,
    working_sets_clear,
)

__all__ = [
    "FOLD_BATCH",
    "MAX_SECTIONS",
    "CommitResult",
    "HistoryContext",
    "NewMessage",
    "SearchContext",
    "WorkingSet",
    "memory_create",
    "memory_delete",
    "memory_edit",
    "memory_extract_and_upsert",
    "memory_note_from_turn",
    "memory_upsert",
    "message_bulk_create",
    "message_exchange_replace",
    "message_jobs_requeue",
    "session_commit",
    "session_create",
    "session_delete",
    "session_history_context",
    "session_search_context",
    "session_update",
    "working_set_clear",
    "working_set_get",
    "working_set_lifetime_s",
    "working_set_update",
    "working_sets_clear",
]
