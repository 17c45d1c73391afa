"""The OpenAI chat-completions wire format: what a client sends (read and checked here, every problem an
``OpenAIError`` naming its ``param``), and the objects, chunks and errors it expects back.

Only what Recollect acts on is read: ``model``, ``messages``, ``stream``, ``stream_options.include_usage``,
``metadata.session_id`` and ``n`` (1 at most). Sampling options (``temperature``, ``max_tokens``, ...),
``tools`` and ``user`` are accepted and ignored: identity comes from the API key alone.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

from django.conf import settings

from foundation.parsers import JSON_BODY_MAX_DEPTH, json_problem, readable_path, text_problem

# Where these routes are mounted (config.urls); the server refuses oversized bodies here in this shape too.
OPENAI_PREFIX = b"/v1/"
# The one model every user has; "recollect:<agent_id>" is the same memory through one agent.
BASE_MODEL = "recollect"
AGENT_SEPARATOR = ":"
AGENT_ID_MAX_CHARS = 128
OWNED_BY = "recollect"
# Messages read from one request: more than any chat front-end resends (each is also bounded by
# MESSAGE_MAX_CHARS, the whole body by API_MAX_BODY_BYTES).
MAX_MESSAGES = 2000
# Roles a client may send. System and developer turns instruct the client's model; Recollect answers
# with its own prompt, so they are neither recorded nor matched. Tool turns are not conversation either.
SPOKEN_ROLES = ("user", "assistant")
OTHER_ROLES = ("system", "developer", "tool", "function")
# Where a client names the session, besides metadata.session_id.
SESSION_HEADER = "X-Session-Id"
OPEN_WEBUI_CHAT_HEADER = "X-OpenWebUI-Chat-Id"
RECORD_HEADER = "X-Recollect-Record"
SOURCES_HEADER = "X-Recollect-Sources"
NOT_RECORDED_VALUES = ("false", "0", "no", "off")
CHAT_ID_MAX_CHARS = 200
# Characters a source URI keeps in the header; everything else (commas, spaces, non-ASCII) is escaped.
URI_SAFE = ":/@-._~"

INVALID_REQUEST = "invalid_request_error"
SERVER_ERROR = "server_error"


class OpenAIError(Exception):
    """An error as OpenAI's API answers it: ``{"error": {"message", "type", "param", "code"}}``."""

    def __init__(
        self,
        message: str,
        *,
        status: int = 400,
        type: str = INVALID_REQUEST,
        param: str | None = None,
        code: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.message, self.status, self.type, self.param, self.code = message, status, type, param, code
        self.headers = headers or {}

    def body(self) -> dict[str, Any]:
        return {"error": {"message": self.message, "type": self.type, "param": self.param, "code": self.code}}


@dataclass(frozen=True)
class Turn:
    """A spoken message of the conversation, as text."""

    role: str
    content: str


@dataclass
class Completion:
    """A chat-completions request as Recollect acts on it."""

    model: str
    agent_id: str
    message: str  # the last user message: the turn to answer
    history: list[Turn]  # the spoken turns before it
    sent: list[dict[str, str]]  # every message with text, as sent (for a client's task, answered as asked)
    stream: bool = False
    include_usage: bool = False
    session_id: str | None = None
    chat_id: str | None = None
    record: bool = True
    id: str = field(default_factory=lambda: f"chatcmpl-{uuid.uuid4().hex}")
    created: int = field(default_factory=lambda: int(time.time()))


def agent_of(model: Any) -> str:
    """The agent a model id names ("" for the base model); an unknown model is a 404 model_not_found."""
    if not isinstance(model, str) or not model:
        raise OpenAIError("you must provide a model parameter.", param="model", code="missing_model")
    if model == BASE_MODEL:
        return ""
    prefix, _, agent = model.partition(AGENT_SEPARATOR)
    if prefix == BASE_MODEL and agent.strip() and len(agent) <= AGENT_ID_MAX_CHARS and not text_problem(agent):
        return agent
    raise OpenAIError(
        f"The model `{readable_path(model)}` does not exist. Use `{BASE_MODEL}` or `{BASE_MODEL}:<agent_id>` "
        "(GET /v1/models lists yours).",
        status=404,
        param="model",
        code="model_not_found",
    )


def parse_body(raw: bytes) -> dict[str, Any]:
    """The body as a JSON object, or a 400 saying what is wrong with it."""
    try:
        body = json.loads(raw)
    except (ValueError, RecursionError):
        raise OpenAIError("We could not parse the JSON body of your request: it is not valid JSON.") from None
    if not isinstance(body, dict):
        raise OpenAIError("The body of your request must be a JSON object.")
    found = json_problem(body, max_depth=JSON_BODY_MAX_DEPTH, nul_allowed=True)
    if found is not None:
        path, problem = found
        raise OpenAIError(f"{readable_path(path) or 'The body'} {problem}.", param=readable_path(path) or None)
    return body


def _text_of(content: Any, where: str) -> str:
    """A message's text: a string, or the text parts of a list of parts (images and files are left out)."""
    if content is None:
        return ""
    if isinstance(content, str):
        parts = [content]
    elif isinstance(content, list):
        parts = []
        for index, part in enumerate(content):
            if not isinstance(part, dict) or not isinstance(part.get("type"), str):
                raise OpenAIError(f"{where}[{index}] must be an object with a type.", param=f"{where}[{index}]")
            if part["type"] == "text":
                if not isinstance(part.get("text"), str):
                    raise OpenAIError(f"{where}[{index}].text must be a string.", param=f"{where}[{index}].text")
                parts.append(part["text"])
    else:
        raise OpenAIError(f"{where} must be a string, an array of content parts, or null.", param=where)
    text = "\n".join(parts)
    if problem := text_problem(text):
        raise OpenAIError(f"{where} {problem}.", param=where)
    if len(text) > settings.MESSAGE_MAX_CHARS:
        raise OpenAIError(
            f"{where} is {len(text)} characters; the limit is {settings.MESSAGE_MAX_CHARS}.",
            param=where,
            code="string_above_max_length",
        )
    return text


def _messages(value: Any) -> list[Turn]:
    """Every message with text, in order (system and tool turns included, marked by their role)."""
    if not isinstance(value, list) or not value:
        raise OpenAIError("messages must be a non-empty array of messages.", param="messages")
    if len(value) > MAX_MESSAGES:
        raise OpenAIError(
            f"messages holds {len(value)} messages; the limit is {MAX_MESSAGES}.",
            param="messages",
            code="array_above_max_length",
        )
    turns = []
    for index, message in enumerate(value):
        where = f"messages[{index}]"
        if not isinstance(message, dict):
            raise OpenAIError(f"{where} must be an object.", param=where)
        role = message.get("role")
        if role not in SPOKEN_ROLES + OTHER_ROLES:
            allowed = ", ".join(SPOKEN_ROLES + OTHER_ROLES)
            raise OpenAIError(f"{where}.role must be one of {allowed}.", param=f"{where}.role")
        text = _text_of(message.get("content"), f"{where}.content")
        if text.strip():
            turns.append(Turn(role=role, content=text))
    return turns


def _flag(body: dict[str, Any], name: str) -> bool:
    value = body.get(name)
    if value is not None and not isinstance(value, bool):
        raise OpenAIError(f"{name} must be a boolean.", param=name)
    return bool(value)


def _options(body: dict[str, Any]) -> tuple[bool, str | None]:
    """``stream_options.include_usage`` and ``metadata.session_id``, checked; and ``n`` must be 1."""
    options = body.get("stream_options") or {}
    if not isinstance(options, dict):
        raise OpenAIError("stream_options must be an object.", param="stream_options")
    usage = options.get("include_usage")
    if usage is not None and not isinstance(usage, bool):
        raise OpenAIError("stream_options.include_usage must be a boolean.", param="stream_options.include_usage")
    metadata = body.get("metadata") or {}
    if not isinstance(metadata, dict):
        raise OpenAIError("metadata must be an object.", param="metadata")
    session_id = metadata.get("session_id")
    if session_id is not None and not isinstance(session_id, str):
        raise OpenAIError("metadata.session_id must be a string.", param="metadata.session_id")
    n = body.get("n")
    if n is not None and (not isinstance(n, int) or isinstance(n, bool) or n != 1):
        raise OpenAIError("Only n=1 is supported: one answer per turn.", param="n")
    return bool(usage), session_id or None


def completion_from(body: dict[str, Any], headers) -> Completion:
    """The request as Recollect acts on it; the turn is the last user message."""
    agent_id = agent_of(body.get("model"))
    turns = _messages(body.get("messages"))
    stream = _flag(body, "stream")
    include_usage, session_id = _options(body)
    last_user = next((i for i in range(len(turns) - 1, -1, -1) if turns[i].role == "user"), None)
    if last_user is None:
        raise OpenAIError("messages must hold a user message with text: the last one is the turn.", param="messages")
    chat_id = headers.get(OPEN_WEBUI_CHAT_HEADER) or None
    if chat_id is not None and (len(chat_id) > CHAT_ID_MAX_CHARS or text_problem(chat_id)):
        raise OpenAIError(f"The {OPEN_WEBUI_CHAT_HEADER} header is not a chat id.", param=OPEN_WEBUI_CHAT_HEADER)
    return Completion(
        model=body["model"],
        agent_id=agent_id,
        message=turns[last_user].content,
        history=[turn for turn in turns[:last_user] if turn.role in SPOKEN_ROLES],
        sent=[{"role": turn.role, "content": turn.content} for turn in turns],
        stream=stream,
        include_usage=include_usage,
        session_id=headers.get(SESSION_HEADER) or session_id,
        chat_id=chat_id,
        record=(headers.get(RECORD_HEADER) or "").strip().lower() not in NOT_RECORDED_VALUES,
    )


# --- answers -------------------------------------------------------------------------------------


def usage(prompt_tokens: int, completion_tokens: int) -> dict[str, int]:
    return {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": completion_tokens,
        "total_tokens": prompt_tokens + completion_tokens,
    }


def source_of(item: dict[str, Any]) -> dict[str, Any]:
    """A retrieved passage as the answer names it: its URI, title, score and what it is."""
    return {
        "uri": item["uri"],
        "title": item.get("title") or "",
        "score": item.get("score"),
        "origin": item.get("origin"),
    }


def sources_header(sources: list[dict[str, Any]]) -> str:
    """The sources' URIs, comma-separated, each escaped so that the header is ASCII without commas inside."""
    return ", ".join(quote(source["uri"], safe=URI_SAFE) for source in sources)


def completion_object(completion: Completion, *, text: str, extra: dict[str, Any], tokens: dict) -> dict[str, Any]:
    return {
        "id": completion.id,
        "object": "chat.completion",
        "created": completion.created,
        "model": completion.model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text, "refusal": None},
                "logprobs": None,
                "finish_reason": "stop",
            }
        ],
        "usage": tokens,
        "system_fingerprint": None,
        "recollect": extra,
    }


def chunk(completion: Completion, *, delta: dict | None = None, finish: str | None = None, **extra: Any) -> dict:
    """A ``chat.completion.chunk``: a piece of the answer (``delta``), or its end (``finish``); the usage
    chunk passes ``choices=[]``."""
    body: dict[str, Any] = {
        "id": completion.id,
        "object": "chat.completion.chunk",
        "created": completion.created,
        "model": completion.model,
        "system_fingerprint": None,
        "choices": [{"index": 0, "delta": delta or {}, "logprobs": None, "finish_reason": finish}],
    }
    body.update(extra)
    return body


def sse(data: dict[str, Any] | str) -> bytes:
    text = data if isinstance(data, str) else json.dumps(data, default=str)
    return f"data: {text}\n\n".encode()


DONE = sse("[DONE]")
