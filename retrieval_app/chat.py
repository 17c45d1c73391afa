"""The chat turn pipeline, shared by the JSON endpoint, server-sent events and the websocket.

One turn: get or create the session; record the user's message (committed before anything can fail,
so nothing a user sent is lost); resolve it against the session and search documents, memories and
earlier conversations; assemble the prompt within a token budget, L1 first, L0 when L1 does not fit;
generate (litellm, streamed, when LLM_MODEL is set; otherwise the built-in engine quotes the retrieved
passages, saying so); record the answer, marked partial when it was cancelled or failed midway.

``chat_turn`` yields events (``context``, ``token``..., then ``done`` or ``error``); transports only
relay them. Bad input is refused before anything is written.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import threading
import time
import uuid
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import connections

from config.exceptions import DomainError, InvalidInputError
from retrieval_app import ai, events
from retrieval_app.ai import extractive
from retrieval_app.exceptions import ChatMessageTooLong, ServerBusy
from retrieval_app.models import SearchTrace
from retrieval_app.services import release_database_connections

logger = logging.getLogger(__name__)

CONTEXT_FIELDS = (
    *("uri", "doc_id", "chunk_id", "level", "text", "abstract", "overview", "score", "source", "match_reason"),
)
SYSTEM_PROMPT = (
    "You are Recollect, an assistant with a memory of the user's documents and earlier conversations. "
    "Answer from the context below when it is relevant and cite the URIs you used in square brackets. "
    "If the context does not hold the answer, say so plainly rather than guessing."
)


@dataclass
class ChatRequest:
    """One turn as a client sends it (the contract's body)."""

    message: str
    session_id: str | None = None
    history: Sequence[dict[str, str]] = ()
    doc_id: str | None = None
    agent_id: str = ""
    debug_search_trace: bool = False


class Cancellation(threading.Event):
    """Set by a transport to stop an answer in flight; ``reason`` says why (recorded with the partial
    answer): "cancelled" by the user, or "disconnected" when the client went away."""

    reason = "cancelled"

    def cancel(self, reason: str = "cancelled") -> None:
        if not self.is_set():
            self.reason = reason
        self.set()


@dataclass
class Event:
    """What a transport relays: ``type`` is context, token, done or error; ``data`` its body."""

    type: str
    data: dict[str, Any]


@dataclass
class _Turn:
    """Everything a turn has gathered by the time it generates."""

    session: Any
    request: ChatRequest
    context: list[dict[str, Any]] = field(default_factory=list)
    retrieval_error: str = ""
    trace: SearchTrace | None = None
    search_trace: dict[str, Any] | None = None
    query: str = ""
    prompt: list[dict[str, str]] = field(default_factory=list)
    prompt_tokens: int = 0
    budget: dict[str, Any] = field(default_factory=dict)


def chat_validate(*, owner, request: ChatRequest) -> None:
    """Refuses bad input before anything is written: an empty or oversized message, another user's (or
    no such) session or document, a malformed history."""
    from documents_app.selectors import document_get
    from sessions_app.selectors import session_get

    if not isinstance(request.message, str) or not request.message.strip():
        raise InvalidInputError("message must not be empty.")
    if len(request.message) > settings.CHAT_MESSAGE_MAX_CHARS:
        raise ChatMessageTooLong(details={"max_chars": settings.CHAT_MESSAGE_MAX_CHARS})
    if request.session_id:
        session_get(owner=owner, session_id=request.session_id)
    if request.doc_id:
        document_get(owner=owner, doc_id=request.doc_id)


def _session_for(*, owner, request: ChatRequest):
    from sessions_app import services
    from sessions_app.selectors import session_get

    if request.session_id:
        return session_get(owner=owner, session_id=request.session_id)
    session = services.session_create(
        owner=owner, title=_title(request.message), agent_id=request.agent_id or "", metadata={"origin": "chat"}
    )
    # A client that kept its own history (seed 003) hands it over once, when the session starts.
    history = [
        services.NewMessage(role=turn["role"], content=turn["content"], metadata={"source": "client_history"})
        for turn in request.history
    ]
    if history:
        services.message_bulk_create(session=session, messages=history)
    return session


def _title(message: str) -> str:
    words = message.split()
    return " ".join(words[:10])[:120] + (" ..." if len(words) > 10 else "")


def _retrieve(owner, turn: _Turn) -> None:
    """Search for the turn; a failure leaves the turn without context and says why."""
    from documents_app.models import document_uri
    from retrieval_app.services import retrieval_search

    request = turn.request
    query = request.message.strip()[: settings.QUERY_MAX_CHARS]
    try:
        found = retrieval_search(
            owner=owner,
            query=query,
            session_id=str(turn.session.id),
            target_uri=document_uri(owner.id, uuid.UUID(str(request.doc_id))) if request.doc_id else None,
            limit=settings.CHAT_CONTEXT_HITS,
            debug=True,
            kind=SearchTrace.Kind.CHAT,
        )
    except Exception as exc:  # whatever broke, the user still gets an answer (seed 003's fallback)
        logger.exception("chat: retrieval failed")
        turn.retrieval_error = f"Search failed, so this answer uses no context: {type(exc).__name__}: {exc}"[:500]
        turn.query = query
        return
    turn.context = found["results"]
    turn.query = found["query_plan"].get("rewritten_query") or query
    turn.trace = SearchTrace.objects.filter(id=found["trace_id"]).first()
    turn.search_trace = found.get("search_trace")


def _context_block(turn: _Turn) -> str:
    """The retrieved context within CHAT_CONTEXT_TOKENS: each hit's L1, else its L0; then the full text
    of the best hits while room is left. What did not fit is recorded in the trace."""
    budget = settings.CHAT_CONTEXT_TOKENS
    used, entries, cut = 0, [], []
    for hit in turn.context:
        for tier, text in (("L1", hit["overview"]), ("L0", hit["abstract"]), ("match_reason", hit["match_reason"])):
            tokens = ai.estimate_tokens(text)
            if text and used + tokens <= budget:
                entries.append({"hit": hit, "tier": tier, "text": text})
                used += tokens
                break
        else:
            cut.append({"uri": hit["uri"], "tokens": ai.estimate_tokens(hit["overview"] or hit["abstract"])})
    for entry in entries:
        content = entry["hit"].get("content") or ""
        extra = ai.estimate_tokens(content) - ai.estimate_tokens(entry["text"])
        if content and entry["tier"] != "L2" and extra > 0 and used + extra <= budget:
            entry.update(tier="L2", text=content)
            used += extra
    turn.budget = {
        "max_tokens": budget,
        "used": used,
        "tiers": {e["hit"]["uri"]: e["tier"] for e in entries},
        "cut": cut,
    }
    used_uris = {e["hit"]["uri"] for e in entries}
    turn.context = [hit for hit in turn.context if hit["uri"] in used_uris]
    return "\n\n".join(f"[{e['hit']['uri']}] ({e['tier']})\n{e['text']}" for e in entries)


def _assemble(turn: _Turn) -> None:
    """The prompt: instructions and retrieved context, the rolling summary, then recent turns verbatim."""
    from sessions_app.services import session_history_context

    history = session_history_context(session=turn.session)
    context = _context_block(turn)
    system = SYSTEM_PROMPT
    if history.summary:
        system += f"\n\nSummary of the conversation so far:\n{history.summary}"
    system += f"\n\nContext:\n{context}" if context else "\n\nContext: nothing relevant was found."
    messages = [{"role": "system", "content": system}]
    for message in history.turns:
        if message.role in ("user", "assistant"):
            messages.append({"role": message.role, "content": message.content[: settings.CHAT_MESSAGE_MAX_CHARS]})
    if messages[-1]["role"] != "user":  # the turn being answered is always last
        messages.append({"role": "user", "content": turn.request.message})
    turn.prompt = messages
    turn.prompt_tokens = sum(ai.estimate_tokens(m["content"]) for m in messages)
    turn.budget.update(
        prompt_tokens=turn.prompt_tokens,
        history_turns=len(history.turns),
        summary_tokens=ai.estimate_tokens(history.summary),
    )


def _record_budget(turn: _Turn) -> None:
    if turn.trace is None:
        return
    turn.trace.stages = [*turn.trace.stages, {"stage": "prompt_budget", "ms": 0.0, **turn.budget}]
    turn.trace.save(update_fields=["stages"])
    if turn.search_trace is not None:
        turn.search_trace["stages"] = turn.trace.stages


def retrieved_answer(query: str, context: Sequence[dict[str, Any]], *, retrieval_error: str = "") -> str:
    """The built-in engine's answer: the passages most relevant to the query, quoted with their URIs and
    labelled as retrieved. It never invents a sentence."""
    if not context:
        reason = " (the search itself failed)" if retrieval_error else ""
        return (
            "No language model is configured, so I can only quote what I find, and I found nothing in your "
            f"documents, memories or earlier conversations about this{reason}."
        )
    wanted = set(extractive.terms_of(query))
    lines = ["No language model is configured; these passages were retrieved (not generated) for your question:"]
    for number, hit in enumerate(context[:3], start=1):
        sentences = extractive.split_sentences(hit.get("content") or hit["text"]) or [hit["text"]]
        ranked = sorted(
            enumerate(sentences), key=lambda item: (-len(wanted & set(extractive.terms_of(item[1]))), item[0])
        )
        chosen = sorted(ranked[:2], key=lambda item: item[0])
        quote = " ".join(sentence for _, sentence in chosen).strip()
        where = hit.get("title") or hit["uri"]
        lines.append(f'{number}. "{quote}" ({where}, {hit["uri"]})')
    return "\n".join(lines)


def _pieces(text: str) -> Iterator[str]:
    yield from re.findall(r"\S+\s*|\s+", text)


def _context_event(turn: _Turn) -> Event:
    data: dict[str, Any] = {
        "context": [{key: hit.get(key) for key in (*CONTEXT_FIELDS, "title", "origin")} for hit in turn.context],
        "session_id": str(turn.session.id),
    }
    if turn.retrieval_error:
        data["retrieval_error"] = turn.retrieval_error
    if turn.request.debug_search_trace and turn.search_trace is not None:
        data["search_trace"] = turn.search_trace
    return Event(events.CONTEXT, data)


def _record_answer(turn: _Turn, text: str, *, generated: bool, status: str, error: str = "") -> None:
    from sessions_app import services

    if not text and status != "complete":
        return
    metadata = {
        # Marked so that commit never mistakes quoted passages for something the user said.
        "source": "generated" if generated else "retrieved",
        "status": status,
        "context_uris": [hit["uri"] for hit in turn.context],
        "prompt_tokens": turn.prompt_tokens,
        **({"trace_id": str(turn.trace.id)} if turn.trace else {}),
        **({"error": error[:500]} if error else {}),
    }
    with _database_turn():
        services.message_bulk_create(
            session=turn.session, messages=[services.NewMessage(role="assistant", content=text, metadata=metadata)]
        )


def chat_turn(*, owner, request: ChatRequest, cancel: Cancellation | None = None) -> Iterator[Event]:
    """Runs one turn, yielding its events. ``cancel`` (set by a transport) stops generation; the partial
    answer is recorded as such. Raises a domain error for bad input before writing anything."""
    from sessions_app import services

    cancel = cancel or Cancellation()
    started = time.perf_counter()
    with _database_turn():
        chat_validate(owner=owner, request=request)
        session = _session_for(owner=owner, request=request)
        services.message_bulk_create(
            session=session, messages=[services.NewMessage(role="user", content=request.message)]
        )
        turn = _Turn(session=session, request=request)
        try:
            _retrieve(owner, turn)
            _assemble(turn)
            _record_budget(turn)
            failure = None
        except Exception as exc:  # the message is saved; the client must still learn its session
            logger.exception("chat: preparing the turn failed")
            failure = f"The turn could not be prepared ({type(exc).__name__}); your message was saved."
    if failure:
        yield Event(events.ERROR, {"error": failure, "session_id": str(session.id)})
        return
    turn.budget["outside_model_ms"] = round((time.perf_counter() - started) * 1000, 2)
    yield _context_event(turn)

    engine = ai.text_engine()
    streaming = hasattr(engine, "stream")
    produced: list[str] = []
    status = "complete"
    try:
        if streaming:
            pieces = engine.stream(turn.prompt, purpose="chat", owner_id=owner.id)
        else:
            pieces = _pieces(retrieved_answer(turn.query, turn.context, retrieval_error=turn.retrieval_error))
        try:
            # Cancelled before the first word: the model is never called (the stream is lazy).
            status = cancel.reason if cancel.is_set() else status
            for piece in () if cancel.is_set() else pieces:
                if cancel.is_set():
                    status = cancel.reason
                    break
                produced.append(piece)
                yield Event(events.TOKEN, {"token": piece, "session_id": str(session.id)})
        finally:
            close = getattr(pieces, "close", None)
            if close:
                close()
    except GeneratorExit:
        # The transport went away (a closed socket or connection): keep what was said, marked partial.
        _record_answer(turn, "".join(produced), generated=streaming, status="disconnected")
        raise
    except Exception as exc:  # the model failed: the user's turn is kept, the error is readable
        logger.warning("chat: generation failed: %s", exc)
        _record_answer(turn, "".join(produced), generated=streaming, status="failed", error=str(exc))
        message = f"The model could not answer ({type(exc).__name__}); your message was saved. {exc}"
        yield Event(events.ERROR, {"error": message[:600], "session_id": str(session.id)})
        return
    answer = "".join(produced)
    _record_answer(turn, answer, generated=streaming, status=status)
    done: dict[str, Any] = {"message": answer, "session_id": str(session.id)}
    if status != "complete":
        done["status"] = status
    if turn.retrieval_error:
        done["retrieval_error"] = turn.retrieval_error
    done["prompt_tokens"] = turn.prompt_tokens
    yield Event(events.DONE, done)


def chat_reply(*, owner, request: ChatRequest) -> dict[str, Any]:
    """One whole turn as the JSON endpoint answers it: ``{message, context, session_id, ...}``."""
    answer: dict[str, Any] = {}
    for event in chat_turn(owner=owner, request=request):
        if event.type in (events.CONTEXT, events.DONE):
            answer.update(event.data)
        elif event.type == events.ERROR:
            answer.update(message="", error=event.data["error"])
    return answer


_SLOTS: dict[int, threading.BoundedSemaphore] = {}
_GATES: dict[int, threading.BoundedSemaphore] = {}


@contextlib.contextmanager
def _database_turn() -> Iterator[None]:
    """The gate below, entered without holding a connection (a thread waiting at the gate with one
    would starve the threads inside it) and left having handed its connections back."""
    release_database_connections()
    with _database_gate():
        try:
            yield
        finally:
            release_database_connections()


def _database_gate() -> threading.BoundedSemaphore:
    """Turns using the database at once (recording, searching, assembling) stay below the connection
    pool's size, so a burst of turns queues here instead of timing out on the pool. Streaming holds
    no connection and is not limited by it: an answer can take a minute, and a pool held by every
    open stream would refuse the next user."""
    pool = settings.DATABASES["default"].get("OPTIONS", {}).get("pool")
    size = max(1, (pool.get("max_size", 8) if isinstance(pool, dict) else 8) - 2)
    return _GATES.setdefault(size, threading.BoundedSemaphore(size))


def _turn_slots() -> threading.BoundedSemaphore:
    """Turns streaming at once in this process, each in its own thread: bounded, so that a flood of
    sockets gets a clear "busy" instead of exhausting threads and database connections."""
    size = settings.CHAT_MAX_CONCURRENT_TURNS
    return _SLOTS.setdefault(size, threading.BoundedSemaphore(size))


async def chat_events(*, owner, request: ChatRequest, cancel: Cancellation) -> AsyncIterator[Event]:
    """``chat_turn`` for async transports: the turn runs in a thread of its own (the ORM and litellm are
    synchronous) and its events are relayed as they come. Leaving the loop early (a closed connection)
    cancels the answer, which is then recorded as partial."""
    slots = _turn_slots()
    if not slots.acquire(blocking=False):
        raise ServerBusy(details={"max_turns": settings.CHAT_MAX_CONCURRENT_TURNS})
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue = asyncio.Queue()

    def put(item: Any) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody is listening any more
            loop.call_soon_threadsafe(queue.put_nowait, item)

    def run() -> None:
        try:
            for event in chat_turn(owner=owner, request=request, cancel=cancel):
                put(event)
        except DomainError as exc:
            put(exc)
        except Exception as exc:  # a bug must still end the stream with a readable error
            logger.exception("chat turn failed")
            put(
                Event(
                    events.ERROR, {"error": f"The turn failed: {type(exc).__name__}.", "session_id": request.session_id}
                )
            )
        finally:
            connections.close_all()
            slots.release()
            put(None)

    try:
        threading.Thread(target=run, name="chat-turn", daemon=True).start()
    except BaseException:
        slots.release()
        raise
    try:
        pending: Any = None
        while True:
            item = pending if pending is not None else await queue.get()
            pending = None
            if item is None:
                return
            if isinstance(item, DomainError):
                raise item
            if item.type == events.TOKEN:
                # Tokens that arrived while the last frame was being sent go out as one: under load
                # the client gets fewer, larger frames instead of a growing backlog.
                text = [item.data["token"]]
                while not queue.empty():
                    pending = queue.get_nowait()
                    if not (isinstance(pending, Event) and pending.type == events.TOKEN):
                        break
                    text.append(pending.data["token"])
                    pending = None
                item = Event(events.TOKEN, {**item.data, "token": "".join(text)})
            yield item
    finally:
        cancel.cancel("disconnected")
