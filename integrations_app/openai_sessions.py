"""Which session an OpenAI-style request continues, and which of its turns are not stored yet.

Chat clients resend the whole conversation every turn. A request names its session by ``X-Session-Id``
or ``metadata.session_id`` (one of the user's sessions, else a 404), or by Open WebUI's
``X-OpenWebUI-Chat-Id`` (kept in the session's metadata, so each chat of Open WebUI is one session);
otherwise its earlier turns are matched against the user's sessions started through ``/v1`` that began
with the same first turn (a digest of it is kept in their metadata). Only turns not stored yet are
recorded, so a resend never duplicates one:

- the stored turns are the start of the request's history: the rest of the history is recorded, then the
  turn is answered;
- the request's history is the stored conversation without its last exchange (a regenerated or edited last
  question, or a retry): the turn replaces that exchange (a session named by the client only; without a
  name, only when the question is the same);
- a named session whose turns differ from the history (or a client that sends no history): the turn alone
  is added to it;
- no session matches: a new one starts, with the history recorded before the turn.

Turns compare by role and text, whitespace aside. System, developer and tool turns are neither matched
nor recorded.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from django.db import transaction
from django.db.models import Min, Q
from django.db.models.functions import Coalesce

from chat_app.services import ChatRequest
from integrations_app.openai_wire import Completion, Turn
from sessions_app import services as sessions
from sessions_app.models import ChatSession, Message
from sessions_app.selectors import session_get

# What a session started through /v1 keeps in its metadata.
ORIGIN = "openai"
OPENING_KEY = "openai_opening"
CHAT_ID_KEY = "openai_chat_id"
# Sessions that began with the same turn, most recent first, compared with a request's history.
CANDIDATES_MAX = 20
# Turns recorded from a client's history are marked so, as the chat marks a history handed over.
HISTORY_SOURCE = "client_history"

APPEND, REPLACE, APART = "append", "replace", "apart"


@dataclass
class Placement:
    """Where a request's turn goes: a session (None: a new one), the turns to record before it, and
    whether it replaces the session's last exchange."""

    session: ChatSession | None
    missing: list[Turn] = field(default_factory=list)
    replace_last: bool = False
    opening: str = ""  # the digest a new session is marked with
    chat_id: str | None = None


def _normal(turn: Turn) -> tuple[str, str]:
    return turn.role, " ".join(turn.content.split())


def opening_digest(first: Turn) -> str:
    role, text = _normal(first)
    return hashlib.sha256(f"{role}\n{text}".encode("utf-8", "surrogatepass")).hexdigest()


def _fit(stored: list[Turn], history: list[Turn]) -> str:
    """How the stored turns stand to the request's history: its start (append), the history and one more
    exchange (replace), or neither (apart)."""
    said, sent = [_normal(t) for t in stored], [_normal(t) for t in history]
    if said == sent[: len(said)]:
        return APPEND
    rest = said[len(sent) :]
    if said[: len(sent)] == sent and rest and rest[0][0] == "user" and all(role != "user" for role, _ in rest[1:]):
        return REPLACE
    return APART


def _spoken(sessions_ids: list) -> dict:
    """The stored spoken turns of these sessions, in order, in one query."""
    rows = (
        Message.objects.filter(session_id__in=sessions_ids, role__in=("user", "assistant"))
        .exclude(metadata__contains={"injected": True})
        .order_by("session_id", "seq")
        .values_list("session_id", "role", "content")
    )
    stored: dict = {session_id: [] for session_id in sessions_ids}
    for session_id, role, content in rows:
        stored[session_id].append(Turn(role=role, content=content))
    return stored


def _last_exchange_archived(session: ChatSession) -> bool:
    last_question = Message.objects.filter(session=session, role="user").order_by("-seq").values("seq")[:1]
    return Message.objects.filter(session=session, seq__gte=last_question, archive__isnull=False).exists()


def _named(session: ChatSession, completion: Completion) -> Placement:
    """A session the client named: the turns it lacks, or the last exchange replaced, or the turn alone."""
    if not completion.history:  # a client that keeps no history sends the new turn alone
        return Placement(session=session)
    stored = _spoken([session.pk])[session.pk]
    fit = _fit(stored, completion.history)
    if fit == APPEND:
        return Placement(session=session, missing=completion.history[len(stored) :])
    if fit == REPLACE and not _last_exchange_archived(session):
        return Placement(session=session, replace_last=True)
    return Placement(session=session)


def _matched(owner, completion: Completion, opening: str) -> Placement | None:
    """The session, among those begun with the same turn, whose stored turns the request continues."""
    candidates = list(
        ChatSession.objects.filter(owner=owner, agent_id=completion.agent_id)
        .filter(**{f"metadata__{OPENING_KEY}": opening})
        .order_by(Coalesce("last_message_at", "created_at").desc(), "-id")[:CANDIDATES_MAX]
    )
    stored = _spoken([session.pk for session in candidates])
    best: tuple[int, Placement] | None = None
    for session in candidates:
        turns = stored[session.pk]
        fit = _fit(turns, completion.history)
        if fit == APPEND and turns:
            placement = Placement(session=session, missing=completion.history[len(turns) :])
            length = len(turns)
        elif fit == REPLACE and _normal(turns[len(completion.history)]) == _normal(Turn("user", completion.message)):
            if _last_exchange_archived(session):
                continue
            placement, length = Placement(session=session, replace_last=True), len(completion.history)
        else:
            continue
        if best is None or length > best[0]:
            best = (length, placement)
    return best[1] if best else None


def conversation_place(*, owner, completion: Completion) -> Placement:
    """Where the request's turn goes (reads only; another user's session is a 404)."""
    if completion.session_id:
        return _named(session_get(owner=owner, session_id=completion.session_id), completion)
    opening = opening_digest(completion.history[0] if completion.history else Turn("user", completion.message))
    if completion.chat_id:
        session = ChatSession.objects.filter(owner=owner, **{f"metadata__{CHAT_ID_KEY}": completion.chat_id}).first()
        if session is not None:
            return _named(session, completion)
        return Placement(session=None, opening=opening, chat_id=completion.chat_id)
    if completion.history:
        matched = _matched(owner, completion, opening)
        if matched is not None:
            return matched
    return Placement(session=None, opening=opening)


def chat_request_for(completion: Completion, placement: Placement) -> ChatRequest:
    """The chat turn this request is: a new session is handed the whole history, once."""
    new = placement.session is None
    return ChatRequest(
        message=completion.message,
        session_id=None if new else str(placement.session.pk),
        history=[{"role": t.role, "content": t.content} for t in completion.history] if new else (),
        agent_id=completion.agent_id,
        replace_last=placement.replace_last,
    )


def conversation_record_missing(*, placement: Placement) -> None:
    """Records the turns of the client's history that the session lacks, before the turn is answered."""
    if placement.session is None or not placement.missing:
        return
    sessions.message_bulk_create(
        session=placement.session,
        messages=[
            sessions.NewMessage(role=turn.role, content=turn.content, metadata={"source": HISTORY_SOURCE})
            for turn in placement.missing
        ],
    )


def conversation_mark(*, session_id: str, placement: Placement) -> None:
    """Marks a session the request started, so that its next turns find it (by its first turn, or by
    Open WebUI's chat id)."""
    if placement.session is not None or not session_id:
        return
    with transaction.atomic():
        session = ChatSession.objects.select_for_update().filter(pk=session_id).first()
        if session is None:
            return
        marks = {"origin": ORIGIN, OPENING_KEY: placement.opening}
        if placement.chat_id:
            marks[CHAT_ID_KEY] = placement.chat_id
        sessions.session_update(session=session, metadata={**session.metadata, **marks})


def agents_of(*, owner) -> list[tuple[str, object]]:
    """The agents of the user's sessions, by name, with when each was first used."""
    rows = (
        ChatSession.objects.filter(owner=owner)
        .filter(~Q(agent_id=""))
        .values("agent_id")
        .annotate(first=Min("created_at"))
        .order_by("agent_id")
    )
    return [(row["agent_id"], row["first"]) for row in rows]
