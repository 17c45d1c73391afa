"""The chat turn pipeline, shared by the JSON endpoint, server-sent events and the websocket.

One turn: the transport resolves the session and document once (``chat_prepare``, which refuses bad
input before anything is written); the user's message is recorded and committed before anything can
fail, so nothing a user sent is lost; it is resolved against the session and searched over documents,
memories and earlier conversations; the prompt is assembled within a token budget; the answer is
generated (litellm, streamed, when LLM_MODEL is set; otherwise the built-in engine quotes the retrieved
passages, saying so) and recorded, marked partial when it was cancelled or failed midway.

Facts the person states are noted as they say them (``memory_note_from_turn``, right after their
message is recorded), announced in the answer (``remembered``) and kept out of its sources (they would
only echo the message). Each retrieved passage's relevance is judged (``relevance``): the built-in
engine quotes only the passages judged relevant, and the mood follows them.

``chat_turn`` yields events (``context``, ``token``..., ``mood``, then ``done`` or ``error``);
transports only relay them.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.db import Error as DjangoDatabaseError
from django.db import IntegrityError, transaction

from chat_app import events, speech
from chat_app.answer import answered_passages, pieces, retrieved_answer
from chat_app.concurrency import Cancellation, database_turn, preparations
from chat_app.events import Event
from chat_app.exceptions import ChatMessageTooLong
from chat_app.mood import Mood, mood_of
from chat_app.prompt import Prompt, prompt_assemble
from chat_app.relevance import Judged, judge
from documents_app.models import Document
from documents_app.selectors import document_get, document_get_many
from foundation import ai
from foundation.accounting import calls_for_session, calls_recorded_together
from foundation.exceptions import InvalidInputError, connection_lost
from foundation.tracing import ms_since
from retrieval_app.hits import Hit
from retrieval_app.models import SearchTrace
from retrieval_app.services import SearchOptions, SearchResult, retrieval_search
from retrieval_app.traces import search_trace_add_stage, search_trace_dict, search_trace_failed, search_trace_finish
from retrieval_app.wire import render_context
from sessions_app import services as sessions
from sessions_app.exceptions import ExchangeAlreadyCommitted
from sessions_app.models import ChatSession, Message
from sessions_app.selectors import session_get, session_last_exchange

logger = logging.getLogger(__name__)
# How much of an earlier conversation's cited passage is kept with the answer (see _citations).
CITED_PASSAGE_CHARS = 1200
# A new session is titled with the first words of its first message, this many at most.
TITLE_WORDS = 10
TITLE_CHARS = 120
# An error kept with a turn (on its answer, its trace or its noted memories) is cut to this length;
# the model's own message, shown to the person, may be a little longer.
ERROR_KEPT_CHARS = 500
MODEL_ERROR_SHOWN_CHARS = 600
# The question as a failed turn's trace keeps it.
TRACED_QUERY_CHARS = 4000


@dataclass
class ChatRequest:
    """One turn as a client sends it."""

    message: str
    session_id: str | None = None
    history: Sequence[dict[str, str]] = ()
    doc_id: str | None = None
    agent_id: str = ""
    debug_search_trace: bool = False
    doc_ids: Sequence[str] = ()  # several documents chosen to scope the turn (with doc_id, if given)
    replace_last: bool = False  # regenerate / edit-and-resend: this question replaces the last exchange


@dataclass
class ChatTarget:
    """What a turn is about, resolved once by the transport: the owner's session (None: a new one
    will be started) and the document it is scoped to, if any."""

    session: ChatSession | None = None
    document: Document | None = None
    documents: list[Document] = field(default_factory=list)  # a chosen set, when several


@dataclass
class _Turn:
    """Everything a turn has gathered by the time it generates."""

    session: ChatSession
    request: ChatRequest
    found: SearchResult | None = None
    context: list[Hit] = field(default_factory=list)
    retrieval_error: str = ""
    query: str = ""
    prompt: Prompt | None = None
    trace: SearchTrace | None = None  # stored when the turn ends, with how it ended and its timings
    kind: str = speech.QUESTION  # what the message is: a question, a statement or a greeting
    remembered: list[dict[str, Any]] = field(default_factory=list)  # memories noted from the message
    noted: dict[str, Any] = field(default_factory=dict)  # how the noting went, for the trace
    judged: list[Judged] = field(default_factory=list)  # the passages the mood rests on, judged

    def mood(self, *, failed: bool = False) -> Mood:
        noted = sum(memory["change"] != "unchanged" for memory in self.remembered)
        return mood_of(
            judged=self.judged, kind=self.kind, noted=noted, retrieval_error=self.retrieval_error, failed=failed
        )


def chat_prepare(*, owner, request: ChatRequest) -> ChatTarget:
    """Refuses bad input before anything is written (an empty or oversized message, another user's or
    no such session or document) and resolves what the turn is about."""
    if not isinstance(request.message, str) or not request.message.strip():
        raise InvalidInputError("message must not be empty.")
    if len(request.message) > settings.CHAT_MESSAGE_MAX_CHARS:
        raise ChatMessageTooLong(details={"max_chars": settings.CHAT_MESSAGE_MAX_CHARS})
    if request.replace_last and not request.session_id:
        raise InvalidInputError(
            "replace_last needs the session_id of the conversation whose last exchange it replaces."
        )
    session = session_get(owner=owner, session_id=request.session_id) if request.session_id else None
    if request.replace_last and session_last_exchange(session=session).filter(archive__isnull=False).exists():
        raise ExchangeAlreadyCommitted()  # said before anything is written; the service checks again
    return ChatTarget(
        session=session,
        document=document_get(owner=owner, doc_id=request.doc_id) if request.doc_id else None,
        documents=document_get_many(owner=owner, doc_ids=request.doc_ids) if request.doc_ids else [],
    )


def _session_start(*, owner, request: ChatRequest) -> ChatSession:
    session = sessions.session_create(
        owner=owner, title=_title(request.message), agent_id=request.agent_id or "", metadata={"origin": "chat"}
    )
    # A client that kept its own history hands it over once, when the session starts.
    history = [
        sessions.NewMessage(role=turn["role"], content=turn["content"], metadata={"source": "client_history"})
        for turn in request.history
    ]
    if history:
        sessions.message_bulk_create(session=session, messages=history)
    return session


def _title(message: str) -> str:
    words = message.split()
    return " ".join(words[:TITLE_WORDS])[:TITLE_CHARS] + (" ..." if len(words) > TITLE_WORDS else "")


def _note(turn: _Turn, message: Message) -> None:
    """Notes the facts the message states; a failure is logged and traced, never the turn's end."""
    started = time.perf_counter()
    try:
        diff = sessions.memory_note_from_turn(session=turn.session, message=message)
    except Exception as exc:  # the message is recorded; a memory it should have made is only missed
        logger.exception("chat: noting memories from the message failed")
        turn.noted = {"error": f"{type(exc).__name__}: {exc}"[:ERROR_KEPT_CHARS]}
        diff = {}
    for change in ("created", "updated", "unchanged"):
        turn.remembered += [{**memory, "change": change} for memory in diff.get(change, [])]
    turn.noted |= {"stage": "memory_note", "ms": ms_since(started), "remembered": turn.remembered}


def _retrieve(owner, turn: _Turn, target: ChatTarget) -> None:
    """Search for the turn; a failure leaves the turn without context and says why."""
    query = turn.request.message.strip()[: settings.QUERY_MAX_CHARS]
    chosen = [*target.documents, *([target.document] if target.document and target.documents else [])]
    # A statement something was noted from names its own subject ("I prefer short answers."): read as a
    # follow-up, it would be searched with what the session said before and bring that back as related.
    tells = turn.kind == speech.STATEMENT and bool(turn.remembered)
    try:
        turn.found = retrieval_search(
            owner=owner,
            query=query,
            session=turn.session,
            # One document is a scope of its own; several chosen ones narrow the user's library.
            target_uri=target.document.uri if target.document and not target.documents else None,
            doc_ids=[str(document.id) for document in chosen],
            limit=settings.CHAT_CONTEXT_HITS,
            kind=SearchTrace.Kind.CHAT,
            save_trace=False,  # stored once the prompt's budget is added to it
            options=SearchOptions(rewrite=False) if tells else None,
        )
    except Exception as exc:  # whatever broke, the user still gets an answer, without context
        logger.exception("chat: retrieval failed")
        reason = f"Search failed, so this answer uses no context: {type(exc).__name__}: {exc}"
        turn.retrieval_error = reason[:ERROR_KEPT_CHARS]
        turn.query = query
        turn.trace = search_trace_failed(
            owner=owner, session=turn.session, kind=SearchTrace.Kind.CHAT, query=query, error=turn.retrieval_error
        )
        return
    # A memory noted from this very message would only repeat it back.
    noted = {memory["uri"] for memory in turn.remembered}
    turn.context = [hit for hit in turn.found.hits if hit.uri not in noted]
    turn.query = turn.found.query or query
    turn.trace = turn.found.trace


def _assemble(turn: _Turn) -> None:
    started = time.perf_counter()
    history = sessions.session_history_context(session=turn.session)
    turn.prompt = prompt_assemble(
        message=turn.request.message, hits=turn.context, history=history, remembered=turn.remembered
    )
    turn.context = turn.prompt.context
    search_trace_add_stage(
        trace=turn.trace, stage={"stage": "prompt_budget", "ms": ms_since(started), **turn.prompt.budget}
    )


def _judge(owner, turn: _Turn, *, generates: bool) -> None:
    """Judges each passage's relevance. The built-in engine answers from the passages it quotes alone
    (a statement's only when clearly relevant), so they are the turn's context (its sources) and what
    its mood rests on; a model sees them all, and the mood rests on them all."""
    started = time.perf_counter()
    judged = judge(owner=owner, query=turn.query, hits=turn.context, written=turn.request.message)
    turn.judged = judged if generates else answered_passages(judged, turn.kind)
    if not generates:
        turn.context = [passage.hit for passage in turn.judged]
    search_trace_add_stage(
        trace=turn.trace,
        stage={
            "stage": "relevance",
            "ms": ms_since(started),
            "confident_from": settings.CHAT_MOOD_CONFIDENT_SCORE,
            "quoted_from": settings.CHAT_RELEVANCE_FLOOR,
            "judged": [passage.as_trace() for passage in judged],
            "kept": [passage.hit.uri for passage in turn.judged],
        },
    )


def _context_event(turn: _Turn) -> Event:
    data: dict[str, Any] = {"context": render_context(turn.context), "session_id": str(turn.session.id)}
    if turn.retrieval_error:
        data["retrieval_error"] = turn.retrieval_error
    if turn.request.debug_search_trace and turn.found is not None:
        data["search_trace"] = search_trace_dict(turn.found.trace)
    return Event(events.CONTEXT, data)


def _citations(turn: _Turn) -> list[dict[str, Any]]:
    """What each numbered source of the answer was, so a page shows its citations again after a reload.
    A document's passage can be read again by its URI; an earlier conversation's cannot (it may be
    deleted, or only an archive's summary may be left), so the words that were cited are kept with it."""
    citations = []
    for hit in turn.context:
        citation = {
            "uri": hit.uri,
            "title": hit.title,
            "origin": hit.origin,
            "kind": hit.kind,
            "doc_id": hit.doc_id,
            "session_id": hit.session_id,
            "score": hit.score,
        }
        if hit.origin == "conversation":
            citation |= {"level": hit.level, "text": hit.text[:CITED_PASSAGE_CHARS], "created_at": hit.created_at}
        citations.append(citation)
    return citations


# How a turn ended, as its trace records it.
_OUTCOMES = {
    "complete": SearchTrace.Outcome.OK,
    "cancelled": SearchTrace.Outcome.CANCELLED,
    "disconnected": SearchTrace.Outcome.DISCONNECTED,
    "failed": SearchTrace.Outcome.GENERATION_FAILED,
}


def _record_answer(
    turn: _Turn, text: str, *, generated: bool, status: str, mood: Mood, error: str = "", timings: dict | None = None
) -> None:
    """Stores the answer (unless there is none to keep) and the turn's trace, with how the turn ended. The
    answer has been given by now: a database connection lost meanwhile (a restart, a dropped network)
    costs one more try on a fresh connection, not the answer."""
    outcome = _OUTCOMES[status]
    if outcome == SearchTrace.Outcome.OK and turn.retrieval_error:
        outcome = SearchTrace.Outcome.RETRIEVAL_FAILED  # answered, but without the context it should have had
    answer = None
    if text or status == "complete":
        answer = sessions.NewMessage(
            role="assistant", content=text, metadata=_answer_metadata(turn, generated, status, mood, error)
        )
    for attempt in range(2):
        try:
            with database_turn(first=True):
                _answer_store(turn, answer, outcome=outcome, error=error, timings=timings, again=attempt > 0)
            return
        except DjangoDatabaseError as exc:
            if attempt or not connection_lost(exc):
                raise
            logger.warning("chat: the database connection went while recording an answer; trying again: %s", exc)


def _answer_metadata(turn: _Turn, generated: bool, status: str, mood: Mood, error: str) -> dict[str, Any]:
    return {
        # Marked so that commit never mistakes quoted passages for something the user said.
        "source": "generated" if generated else "retrieved",
        "status": status,
        "context_uris": [hit.uri for hit in turn.context],
        "citations": _citations(turn),
        "mood": mood.mood,
        "remembered": turn.remembered,
        "prompt_tokens": turn.prompt.tokens if turn.prompt else 0,
        "trace_id": str(turn.trace.id),
        **({"error": error[:ERROR_KEPT_CHARS]} if error else {}),
    }


def _answer_store(
    turn: _Turn, answer: sessions.NewMessage | None, *, outcome: str, error: str, timings: dict | None, again: bool
) -> None:
    """The trace finished and the answer appended. ``again``: a first try lost its connection, perhaps
    while or after committing its writes, so what is stored already is not stored twice."""
    if not again:
        search_trace_finish(trace=turn.trace, outcome=outcome, error=error, timings=timings)
        if answer is not None:
            sessions.message_bulk_create(session=turn.session, messages=[answer], keep_folded=True)
        return
    try:
        with transaction.atomic():
            search_trace_finish(trace=turn.trace, outcome=outcome, error=error, timings=timings)
    except IntegrityError:  # the first try's trace was committed after all: it is written over
        turn.trace._state.adding = False
        search_trace_finish(trace=turn.trace, outcome=outcome, error=error, timings=timings)
    if answer is None:
        return
    with transaction.atomic():
        # The first try locked the session before writing its answer: once this lock is had, that try's
        # transaction is over, committed or not, and whether the answer is there can be told.
        ChatSession.objects.select_for_update().filter(pk=turn.session.pk).exists()
        if not Message.objects.filter(session=turn.session, metadata__trace_id=str(turn.trace.id)).exists():
            sessions.message_bulk_create(session=turn.session, messages=[answer], keep_folded=True)
        else:  # stored by the first try, whose jobs (folding the history, say) went with its connection
            sessions.message_jobs_requeue(session=turn.session, keep_folded=True)


def _prepare(owner, request: ChatRequest, target: ChatTarget | None, *, generates: bool, started: float):
    """Records the message, notes what it states, searches, assembles the prompt and judges the passages:
    the turn, ready to answer, and why it could not be prepared ("" when it could)."""
    with database_turn(), calls_recorded_together():
        target = target or chat_prepare(owner=owner, request=request)
        session = target.session or _session_start(owner=owner, request=request)
        question = sessions.NewMessage(role="user", content=request.message)
        if request.replace_last:
            recorded = sessions.message_exchange_replace(session=session, question=question)
        else:
            recorded = sessions.message_bulk_create(session=session, messages=[question])
        turn = _Turn(session=session, request=request, kind=speech.message_kind(request.message))
        _note(turn, recorded[-1])
        try:
            with calls_for_session(session.id):
                _retrieve(owner, turn, target)
                search_trace_add_stage(trace=turn.trace, stage=turn.noted)
                _assemble(turn)
                _judge(owner, turn, generates=generates)
        except Exception as exc:  # the message is saved; the client must still learn its session
            logger.exception("chat: preparing the turn failed")
            # What the search did, if it got that far, is still worth keeping.
            trace = turn.trace or search_trace_failed(
                owner=owner,
                session=session,
                kind=SearchTrace.Kind.CHAT,
                query=request.message[:TRACED_QUERY_CHARS],
                error="",
            )
            search_trace_finish(
                trace=trace,
                outcome=SearchTrace.Outcome.PREPARE_FAILED,
                error=f"{type(exc).__name__}: {exc}",
                timings={"turn": ms_since(started)},
            )
            return turn, f"The turn could not be prepared ({type(exc).__name__}); your message was saved."
    return turn, ""


def _answer_stream(engine: ai.TextEngine, turn: _Turn, owner) -> Iterator[str]:
    """The answer's pieces: streamed by the model, or the built-in engine's answer word by word."""
    if engine.generates:
        return engine.stream(turn.prompt.messages, purpose="chat", owner_id=owner.id, session_id=turn.session.id)
    answer = retrieved_answer(
        message=turn.request.message,
        query=turn.query,
        judged=turn.judged,
        remembered=turn.remembered,
        retrieval_error=turn.retrieval_error,
    )
    return pieces(answer)


def _done_event(turn: _Turn, answer: str, status: str) -> Event:
    done: dict[str, Any] = {"message": answer, "session_id": str(turn.session.id)}
    if status != "complete":
        done["status"] = status
    if turn.retrieval_error:
        done["retrieval_error"] = turn.retrieval_error
    done["prompt_tokens"] = turn.prompt.tokens
    done["remembered"] = turn.remembered
    return Event(events.DONE, done)


def chat_turn(
    *, owner, request: ChatRequest, target: ChatTarget | None = None, cancel: Cancellation | None = None
) -> Iterator[Event]:
    """Runs one turn, yielding its events. ``target`` is what ``chat_prepare`` resolved (resolved here
    when not given); ``cancel`` (set by a transport) stops generation, the partial answer kept as such."""
    cancel = cancel or Cancellation()
    engine = ai.text_engine()
    opened = chat_turn_open(owner=owner, request=request, target=target, engine=engine)
    yield from opened.events
    if opened.answer is None:
        return
    turn, answer = opened.turn, opened.answer
    try:
        yield from _tokens(_answer_stream(engine, turn, owner), cancel, answer, session_id=opened.session_id)
    except GeneratorExit:
        chat_turn_abandon(opened)
        raise
    except Exception as exc:  # the model failed: the user's turn is kept, the error is readable
        yield from chat_turn_close(opened, error=exc)
        return
    yield from chat_turn_close(opened)


@dataclass
class OpenedTurn:
    """A turn prepared for its answer (``chat_turn_open``): the events so far, and the answer to fill in,
    or None when the turn ended there (it could not be prepared)."""

    turn: _Turn
    events: list[Event]
    answer: _Answer | None

    @property
    def session_id(self) -> str:
        return str(self.turn.session.id)


def chat_turn_open(*, owner, request: ChatRequest, target: ChatTarget | None, engine: ai.TextEngine) -> OpenedTurn:
    """The part of ``chat_turn`` before the answer: the turn recorded, searched and assembled, and its
    ``context`` event (or, when it could not be prepared, its ending)."""
    started = time.perf_counter()
    with preparations().preparing():
        turn, failure = _prepare(owner, request, target, generates=engine.generates, started=started)
    if failure:
        ending = _ending(
            turn, turn.mood(failed=True), Event(events.ERROR, {"error": failure, "session_id": str(turn.session.id)})
        )
        return OpenedTurn(turn=turn, events=list(ending), answer=None)
    turn.prompt.budget["outside_model_ms"] = ms_since(started)
    return OpenedTurn(
        turn=turn, events=[_context_event(turn)], answer=_Answer(started=started, generated=engine.generates)
    )


def chat_turn_close(opened: OpenedTurn, *, error: Exception | None = None) -> list[Event]:
    """The part of ``chat_turn`` after the answer: the answer recorded with how it ended, then the turn's
    ending (``error``: the model failed; the user's turn is kept, the error readable)."""
    turn, answer = opened.turn, opened.answer
    if error is None:
        mood = _answer_record(turn, answer, status=answer.status)
        return list(_ending(turn, mood, _done_event(turn, answer.text, answer.status)))
    logger.warning("chat: generation failed: %s", error)
    mood = _answer_record(turn, answer, status="failed", error=str(error))
    message = f"The model could not answer ({type(error).__name__}); your message was saved. {error}"
    failed = Event(events.ERROR, {"error": message[:MODEL_ERROR_SHOWN_CHARS], "session_id": opened.session_id})
    return list(_ending(turn, mood, failed))


def chat_turn_abandon(opened: OpenedTurn) -> None:
    """The transport went away mid-answer (a closed socket or connection): what was said is kept,
    marked partial."""
    _answer_record(opened.turn, opened.answer, status="disconnected")


def chat_turn_token(answer: _Answer, piece: str, *, session_id: str) -> Event:
    """A piece of the answer, kept, as the event that relays it."""
    if not answer.produced:
        answer.timings["first_token"] = ms_since(answer.started)
    answer.produced.append(piece)
    return Event(events.TOKEN, {"token": piece, "session_id": session_id})


@dataclass
class _Answer:
    """The answer as it is produced: its pieces so far, how it stands, and when its first piece came."""

    started: float
    generated: bool
    produced: list[str] = field(default_factory=list)
    status: str = "complete"
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def text(self) -> str:
        return "".join(self.produced)


def _tokens(stream: Iterator[str], cancel: Cancellation, answer: _Answer, *, session_id: str) -> Iterator[Event]:
    """Relays the answer's pieces as they come, until the stream ends or the turn is cancelled (the answer's
    status then says why). The stream is closed however this ends, a transport going away included."""
    try:
        # Cancelled before the first word: the model is never called (the stream is lazy).
        answer.status = cancel.reason if cancel.is_set() else answer.status
        for piece in () if cancel.is_set() else stream:
            if cancel.is_set():
                answer.status = cancel.reason
                break
            yield chat_turn_token(answer, piece, session_id=session_id)
    finally:
        stream.close()


def _answer_record(turn: _Turn, answer: _Answer, *, status: str, error: str = "") -> Mood:
    """Records what was answered with how the turn ended and how long it took; the mood it ended in."""
    mood = turn.mood(failed=status == "failed")
    answer.timings["turn"] = ms_since(answer.started)
    _record_answer(
        turn, answer.text, generated=answer.generated, status=status, mood=mood, error=error, timings=answer.timings
    )
    return mood


def _ending(turn: _Turn, mood: Mood, last: Event) -> Iterator[Event]:
    """How every turn ends: its mood, then ``done`` or ``error``."""
    yield Event(events.MOOD, {**mood.as_dict(), "session_id": str(turn.session.id)})
    yield last


def chat_reply(*, owner, request: ChatRequest, target: ChatTarget | None = None) -> dict[str, Any]:
    """One whole turn as the JSON endpoint answers it: ``{message, context, session_id, ...}``."""
    answer: dict[str, Any] = {}
    for event in chat_turn(owner=owner, request=request, target=target):
        if event.type in (events.CONTEXT, events.MOOD, events.DONE):
            answer.update(event.data)
        elif event.type == events.ERROR:
            answer.update(message="", error=event.data["error"])
    return answer
