"""The MCP server's tools: recall, find, search, read, ls, remember, commit and forget.

Each tool is a thin door onto the same services and selectors the REST API uses, always on behalf of the
person whose key signed the request (``CALLER``, set by ``integrations_app.mcp_server``), and each answer
says what it searched or changed: a model reading it should never have to guess whose data, or how much
of it, stood behind an empty result.

Tools are async; their database work runs on the request's own thread (``sync_to_async`` with
``thread_sensitive``), as a Django view's would, and hands its connections back when it ends. A domain
error (not found, invalid input) becomes a tool error (``isError: true``) with the service's own message:
another person's session, memory or URI is "not found", exactly like a missing one.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from contextvars import ContextVar
from typing import Annotated, Any, Literal

from asgiref.sync import sync_to_async
from django.conf import settings
from django.db import transaction
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.tools import Tool
from mcp_types import ToolAnnotations
from pydantic import BaseModel, ConfigDict, Field

from documents_app import selectors as documents
from documents_app.uris import user_root_uri
from foundation.db import release_database_connections
from foundation.exceptions import DATABASE_DOWN_MESSAGE, DomainError, is_database_down
from retrieval_app import recall as memory_recall
from retrieval_app import services as retrieval
from retrieval_app.hits import Hit
from sessions_app import selectors as sessions
from sessions_app import services as session_services
from sessions_app.uris import memory_id_of, message_uri

SERVER_NAME = "recollect"
INSTRUCTIONS = (
    "Recollect is the user's long-term memory: their documents (a tree of viking:// URIs with an L0 abstract, "
    "an L1 overview and the L2 full text), the memories drawn from their conversations, and the conversations "
    "themselves. Use `search` (within a session) or `find` (documents only) and `recall` (earlier "
    "conversations) before answering from memory; `read` and `ls` open what they point to. Record what is "
    "worth keeping with `remember`, then `commit` the session so its memories are drawn. Everything is "
    "scoped to the person whose key signs the requests."
)

# Who signed the request in; set by the transport before the server sees the request.
CALLER: ContextVar[Any] = ContextVar("recollect_mcp_caller", default=None)

# A passage's full text is given up to this many characters in search answers; `read` gives the rest.
HIT_CONTENT_CHARS = 2000
MAX_HITS = 50
MAX_RECALL = 50
MAX_LS = 500
MAX_REMEMBER = 1000
TITLE_MAX_CHARS = 200
# Recall takes longer questions than a document search, as the REST API does.
QUERY_MAX_CHARS = 10_000

READ_ONLY = ToolAnnotations(read_only_hint=True, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
WRITES = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=False, open_world_hint=False)
COMMITS = ToolAnnotations(read_only_hint=False, destructive_hint=False, idempotent_hint=True, open_world_hint=False)
DELETES = ToolAnnotations(read_only_hint=False, destructive_hint=True, idempotent_hint=True, open_world_hint=False)

Query = Annotated[str, Field(min_length=1, max_length=QUERY_MAX_CHARS, description="What to look for, in plain words.")]
# Searches of documents take the product's own limit (QUERY_MAX_CHARS), as the REST API's do.
SearchQuery = Annotated[
    str, Field(min_length=1, max_length=settings.QUERY_MAX_CHARS, description="What to look for, in plain words.")
]
TargetUri = Annotated[
    str | None,
    Field(
        max_length=512,
        description="Search only under this viking:// URI (a document or a section of one, from `ls` or an "
        "earlier result); all of the user's documents when omitted.",
    ),
]
SessionId = Annotated[uuid.UUID, Field(description="A session's id, as `remember` returned it.")]


def caller():
    """The person whose key signed this request (the transport refuses requests without one)."""
    user = CALLER.get()
    if user is None:
        raise ToolError("Not signed in: send an API key as `Authorization: Bearer <key>`.")
    return user


def _on_request_thread(fn: Callable[..., Any], /, **kwargs: Any) -> Any:
    try:
        return fn(**kwargs)
    except DomainError as exc:
        raise ToolError(f"{exc.code}: {exc.message}") from exc
    except Exception as exc:
        if is_database_down(exc):
            raise ToolError(f"unavailable: {DATABASE_DOWN_MESSAGE}") from exc
        raise
    finally:
        release_database_connections()


async def run(fn: Callable[..., Any], /, **kwargs: Any) -> Any:
    """``fn(owner=<the caller>, **kwargs)`` on the request's thread."""
    return await sync_to_async(_on_request_thread, thread_sensitive=True)(fn, owner=caller(), **kwargs)


def _user_scope(owner) -> str:
    return f"the documents, memories and conversations of {owner.get_username()} (user {owner.id})"


def _clip(text: str, limit: int = HIT_CONTENT_CHARS) -> str:
    return text if len(text) <= limit else text[:limit] + f" … [{len(text) - limit} more characters: read the uri]"


def _hit(hit: Hit) -> dict[str, Any]:
    shown: dict[str, Any] = {
        "uri": hit.uri,
        "origin": hit.origin,
        "kind": hit.kind,
        "title": hit.document_title or hit.title,
        "level": hit.level,
        "text": hit.text,
        "score": round(hit.score, 4),
        "match_reason": hit.match_reason,
    }
    if hit.kind != "document" and hit.kind != "section":
        shown["content"] = _clip(hit.content)
    if hit.origin == "memory":
        shown["memory_id"] = memory_id_of(hit.uri)
    if hit.origin == "conversation":
        shown.update(session_id=hit.session_id, created_at=hit.created_at)
    return shown


# --- the tools' work, on the request's thread -------------------------------------------------------------


def _recall(*, owner, query: str, max_results: int, exclude_session_id: uuid.UUID | None) -> dict[str, Any]:
    found = memory_recall.memory_recall(
        owner=owner, query=query, max_results=max_results, exclude_session_id=exclude_session_id
    )
    excluded = f", leaving out session {exclude_session_id}" if exclude_session_id else ""
    return {
        "scope": f"Searched every earlier conversation of {owner.get_username()} (user {owner.id}){excluded}.",
        "source": found["source"],
        "count": found["count"],
        "messages": [
            {
                "uri": message_uri(m["session_id"], m["id"]),
                "session_id": m["session_id"],
                "session_title": m["session_title"],
                "role": m["role"],
                "content": m["content"],
                "created_at": m["created_at"],
                "score": m["score"],
            }
            for m in found["messages"]
        ],
    }


def _find(*, owner, query: str, target_uri: str | None, limit: int) -> dict[str, Any]:
    found = retrieval.retrieval_find(owner=owner, query=query, target_uri=target_uri, limit=limit)
    under = found.trace.plan.get("target_uri") or user_root_uri(owner.id)
    return {
        "scope": f"Searched the documents of {owner.get_username()} under {under} (documents only: no memories "
        "or conversations).",
        "count": len(found.hits),
        "results": [_hit(hit) for hit in found.hits],
        "trace_id": str(found.trace.id),
    }


def _search(*, owner, query: str, session_id: uuid.UUID, target_uri: str | None, limit: int) -> dict[str, Any]:
    session = sessions.session_get(owner=owner, session_id=session_id)
    found = retrieval.retrieval_search(owner=owner, query=query, session=session, target_uri=target_uri, limit=limit)
    under = found.trace.plan.get("target_uri") or user_root_uri(owner.id)
    return {
        "scope": f"Searched, in session {session.id}, the documents of {owner.get_username()} under {under}, "
        "their long-term memories and their earlier conversations.",
        "query": found.query,
        "count": len(found.hits),
        "results": [_hit(hit) for hit in found.hits],
        "trace_id": str(found.trace.id),
    }


def _read(*, owner, uri: str, level: str) -> dict[str, Any]:
    memory_id = memory_id_of(uri)
    if memory_id is not None:
        memory = sessions.memory_get(owner=owner, memory_id=memory_id)
        text = f"{memory.category}/{memory.key}" if level == "L0" else memory.content
        read = {"uri": memory.uri, "level": level, "kind": "memory", "title": memory.key, "text": text}
    else:
        read = documents.fs_read(owner=owner, uri=uri, level=level)
    return {"scope": f"Read from {_user_scope(owner)}.", **read}


def _ls(*, owner, uri: str | None, offset: int, limit: int) -> dict[str, Any]:
    listed = documents.fs_ls(owner=owner, uri=uri or user_root_uri(owner.id), offset=offset, limit=limit)
    return {"scope": f"Listed {listed['uri']}, in the documents of {owner.get_username()}.", **listed}


def _remember(*, owner, messages: list[RememberedMessage], session_id: uuid.UUID | None, title: str) -> dict:
    with transaction.atomic():
        if session_id is None:
            session = session_services.session_create(owner=owner, title=title, metadata={"source": "mcp"})
        else:
            session = sessions.session_get(owner=owner, session_id=session_id)
        rows = session_services.message_bulk_create(
            session=session,
            messages=[session_services.NewMessage(role=m.role, content=m.content) for m in messages],
        )
    made = "a new session" if session_id is None else "session"
    return {
        "scope": f"Recorded in {made} {session.id} of {owner.get_username()}.",
        "session_id": str(session.id),
        "created_session": session_id is None,
        "message_ids": [row.id for row in rows],
        "next": "Call `commit` with this session_id to archive these turns and draw long-term memories.",
    }


def _commit(*, owner, session_id: uuid.UUID, keep_recent: int) -> dict[str, Any]:
    session = sessions.session_get(owner=owner, session_id=session_id)
    result = session_services.session_commit(session=session, keep_recent=keep_recent)
    archive = result.archive
    return {
        "scope": f"Committed session {session.id} of {owner.get_username()}.",
        "committed": result.committed,
        "message": result.reason or f"Archived {archive.message_count} messages.",
        "archive": None
        if archive is None
        else {
            "uri": archive.uri,
            "message_count": archive.message_count,
            "abstract": archive.abstract,
            "overview": archive.overview,
        },
        "memories": [
            {"memory_id": m.id, "uri": m.uri, "category": m.category, "key": m.key, "content": m.content}
            for m in result.memories
        ],
    }


def _forget(*, owner, memory_id: int) -> dict[str, Any]:
    memory = sessions.memory_get(owner=owner, memory_id=memory_id)
    forgotten = {"memory_id": memory.id, "uri": memory.uri, "category": memory.category, "content": memory.content}
    session_services.memory_delete(memory=memory)
    return {"scope": f"Forgot one memory of {owner.get_username()}.", "forgotten": forgotten}


# --- the tools, as clients see them -----------------------------------------------------------------------


class RememberedMessage(BaseModel):
    """One turn of a conversation, as it was said."""

    model_config = ConfigDict(extra="forbid")

    role: Literal["user", "assistant", "system"] = Field(description="Who said it.")
    content: str = Field(min_length=1, max_length=settings.MESSAGE_MAX_CHARS, description="What was said.")


async def recall(
    query: Query,
    max_results: Annotated[int, Field(ge=1, le=MAX_RECALL, description="At most this many messages.")] = 10,
    exclude_session_id: Annotated[
        uuid.UUID | None, Field(description="Leave this session out (the one you are in, typically).")
    ] = None,
) -> dict[str, Any]:
    """Recall what was said in the user's earlier conversations: the messages most relevant to `query`, by
    meaning and by words, best first, each with its session and time."""
    return await run(_recall, query=query, max_results=max_results, exclude_session_id=exclude_session_id)


async def find(
    query: SearchQuery,
    target_uri: TargetUri = None,
    limit: Annotated[int, Field(ge=1, le=MAX_HITS, description="At most this many results.")] = 5,
) -> dict[str, Any]:
    """Find passages in the user's documents (no session, no memories): the best sections and chunks for
    `query`, each with its viking:// URI, its overview and why it matched."""
    return await run(_find, query=query, target_uri=target_uri, limit=limit)


async def search(
    query: SearchQuery,
    session_id: SessionId,
    target_uri: TargetUri = None,
    limit: Annotated[int, Field(ge=1, le=MAX_HITS, description="At most this many results.")] = 5,
) -> dict[str, Any]:
    """Session-aware search over the user's documents, long-term memories and earlier conversations. A
    follow-up ("and its warranty?") is resolved from the session's recent turns."""
    return await run(_search, query=query, session_id=session_id, target_uri=target_uri, limit=limit)


async def read(
    uri: Annotated[
        str,
        Field(
            min_length=1,
            max_length=512,
            description="A viking:// URI of a document or a node below one (from `ls`, `find` or `search`), or "
            "of a memory.",
        ),
    ],
    level: Annotated[
        Literal["L0", "L1", "L2"],
        Field(description="L0: a one-line abstract; L1: an overview; L2: the full text."),
    ] = "L1",
) -> dict[str, Any]:
    """Read a document, a section, a passage or a memory at one tier: L0 abstract, L1 overview or L2 full
    text. Start cheap (L0/L1) and read L2 only when the detail matters."""
    return await run(_read, uri=uri, level=level)


async def ls(
    uri: Annotated[
        str | None,
        Field(max_length=512, description="The viking:// URI to list; the user's documents when omitted."),
    ] = None,
    offset: Annotated[int, Field(ge=0, description="Skip this many entries (paging).")] = 0,
    limit: Annotated[int, Field(ge=1, le=MAX_LS, description="At most this many entries.")] = 100,
) -> dict[str, Any]:
    """List a directory of the user's documents: the documents under the root, or the sections and chunks
    of a document or section, each with its L0 abstract."""
    return await run(_ls, uri=uri, offset=offset, limit=limit)


async def remember(
    messages: Annotated[
        list[RememberedMessage],
        Field(min_length=1, max_length=MAX_REMEMBER, description="The turns to record, oldest first."),
    ],
    session_id: Annotated[
        uuid.UUID | None, Field(description="Add to this session; a new session is started when omitted.")
    ] = None,
    title: Annotated[str, Field(max_length=TITLE_MAX_CHARS, description="The title of a new session.")] = "",
) -> dict[str, Any]:
    """Record messages of a conversation into a session, as given (no reply is generated), starting a new
    session when none is named. Returns the session's id: pass it to `search` and `commit`."""
    return await run(_remember, messages=messages, session_id=session_id, title=title)


async def commit(
    session_id: SessionId,
    keep_recent: Annotated[int, Field(ge=0, le=100_000, description="Leave the last this-many turns uncommitted.")] = 0,
) -> dict[str, Any]:
    """Commit a session: archive its uncommitted turns with an abstract and an overview, and draw long-term
    memories from them. Committing again with nothing new changes nothing."""
    return await run(_commit, session_id=session_id, keep_recent=keep_recent)


async def forget(
    memory_id: Annotated[int, Field(ge=1, description="The memory's id (`memory_id` in other tools' answers).")],
) -> dict[str, Any]:
    """Forget one long-term memory for good. This cannot be undone."""
    return await run(_forget, memory_id=memory_id)


TOOLS: tuple[tuple[Callable[..., Any], str, ToolAnnotations], ...] = (
    (recall, "Recall earlier conversations", READ_ONLY),
    (find, "Find in documents", READ_ONLY),
    (search, "Search documents, memories and conversations", READ_ONLY),
    (read, "Read a URI at L0, L1 or L2", READ_ONLY),
    (ls, "List a directory", READ_ONLY),
    (remember, "Remember messages", WRITES),
    (commit, "Commit a session", COMMITS),
    (forget, "Forget a memory", DELETES),
)


def _strict(tool: Tool) -> Tool:
    """Unknown arguments are refused rather than ignored: a misspelt `target_uri` would otherwise widen a
    search to everything without a word."""
    tool.fn_metadata.arg_model.model_config["extra"] = "forbid"
    tool.fn_metadata.arg_model.model_rebuild(force=True)
    tool.parameters["additionalProperties"] = False
    return tool


def mcp_server_build() -> MCPServer:
    tools = [_strict(Tool.from_function(fn, title=title, annotations=hints)) for fn, title, hints in TOOLS]
    return MCPServer(SERVER_NAME, title="Recollect", instructions=INSTRUCTIONS, tools=tools, log_level="WARNING")
