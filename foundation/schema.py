"""The OpenAPI schema's shared parts: the error answer every endpoint can give, the statuses it comes with,
the chat's server-sent events and the websocket's events.

Views state what is particular to them (a 404 for a session named in the body, a 503 from the model);
``AutoSchema`` adds what follows from how every API view works, so a new endpoint is documented
truthfully without anyone remembering to: 401 for a missing or wrong credential, 406 for an ``Accept``
nobody can serve, 414 for an overlong query string, 503 while the database is down, 400/413/415
wherever a body is parsed, 403 where a signed-in browser needs its CSRF
token, 404 wherever a path names an object or a page is asked for, 429 where a throttle applies.
"""

from __future__ import annotations

import json
from typing import Any

from drf_spectacular.openapi import AutoSchema as SpectacularAutoSchema
from drf_spectacular.utils import OpenApiExample, OpenApiResponse
from rest_framework import serializers


class ErrorDetailSerializer(serializers.Serializer):
    code = serializers.CharField(help_text="Stable and machine-readable, e.g. invalid, not_found, session_not_found.")
    message = serializers.CharField(help_text="For people; may change between versions.")
    details = serializers.DictField(
        help_text="More about the error; a 400 from validation has `fields`, each field with its problems."
    )


class ErrorSerializer(serializers.Serializer):
    """Every 4xx (and 503) of the API has this shape."""

    error = ErrorDetailSerializer()


# What each status means here, and an answer the API really gives with it.
_ERRORS: dict[int, tuple[str, str, str, dict[str, Any]]] = {
    400: (
        "The body or the query string is not acceptable; `details.fields` names each problem.",
        "invalid",
        "query: This field is required.",
        {"fields": {"query": ["This field is required."]}},
    ),
    401: (
        "No credential, or a token or session that is not valid.",
        "not_authenticated",
        "Authentication credentials were not provided.",
        {},
    ),
    403: (
        "A browser session without its CSRF token. Another user's object is a 404, never a 403.",
        "permission_denied",
        "CSRF Failed: CSRF token missing.",
        {},
    ),
    404: (
        "No such object for this user (another user's object is indistinguishable from none), or no such page.",
        "not_found",
        "Not found.",
        {},
    ),
    405: ("The path exists but not with this method.", "method_not_allowed", 'Method "PUT" not allowed.', {}),
    406: (
        "None of the media types in `Accept` can be served.",
        "not_acceptable",
        "Could not satisfy the request Accept header.",
        {},
    ),
    409: (
        "The request raced a concurrent change to the same object; retrying may succeed.",
        "conflict",
        "The request conflicted with a concurrent change; retry it.",
        {},
    ),
    413: (
        "The body is larger than the configured limit.",
        "too_large",
        "The request body is 30000000 bytes; the limit is 20971520.",
        {"limit_bytes": 20971520},
    ),
    414: (
        "The query string is longer than 8 KB (or the request line than 16 KB).",
        "uri_too_long",
        "The query string is 60006 bytes; the limit is 8192.",
        {"limit_bytes": 8192},
    ),
    415: (
        "The body's `Content-Type` is not one this endpoint reads.",
        "unsupported_media_type",
        'Unsupported media type "text/plain" in request.',
        {},
    ),
    429: ("Too many requests; `Retry-After` says when to try again.", "throttled", "Request was throttled.", {}),
    503: (
        "A service the answer needs (the database, the model, a worker slot) is unavailable; `Retry-After`"
        " says when to try again.",
        "unavailable",
        "The database is unavailable; retry in a few seconds.",
        {},
    ),
}


def error_response(status: int, description: str = "", example: dict[str, Any] | None = None) -> OpenApiResponse:
    """The documented answer for an error status, in the API's error shape with a real example."""
    default_description, code, message, details = _ERRORS[status]
    body = example or {"error": {"code": code, "message": message, "details": details}}
    return OpenApiResponse(
        response=ErrorSerializer,
        description=description or default_description,
        examples=[OpenApiExample(body["error"]["code"], value=body, status_codes=[str(status)])],
    )


def errors(*statuses: int, **descriptions: str) -> dict[int, OpenApiResponse]:
    """Error responses for ``extend_schema(responses={200: ..., **errors(404, 503)})``; a status may be
    given its own description by name, as in ``errors(404, not_found="No session with that id.")``."""
    by_name = {"bad_request": 400, "not_found": 404, "conflict": 409, "unavailable": 503, "too_large": 413}
    described = {by_name[name]: text for name, text in descriptions.items()}
    return {status: error_response(status, described.get(status, "")) for status in {*statuses, *described}}


def non_blank_text(max_length: int) -> dict[str, Any]:
    """The schema of a text that must hold something other than spaces, for fields whose emptiness and
    length are checked beyond the serializer (so that every transport gives the same error).

    "Not only spaces" is said in words, not as a ``pattern``: tools that fold a pattern and the length
    into one regular expression (schemathesis does) build an automaton the size of ``max_length``."""
    return {
        "type": "string",
        "minLength": 1,
        "maxLength": max_length,
        "description": "Must hold a character other than white space.",
    }


def viking_uri(max_length: int) -> dict[str, Any]:
    """The schema of a viking:// URI; which URIs exist, and whose they are, the view decides."""
    return {"type": "string", "minLength": 1, "maxLength": max_length, "pattern": "^viking://"}


JSON_OBJECT = {"type": "object", "additionalProperties": True}

_UNSAFE = {"POST", "PUT", "PATCH", "DELETE"}


class AutoSchema(SpectacularAutoSchema):
    """drf-spectacular's schema, plus the error answers that follow from how every API view works."""

    def map_parsers(self):
        # The API speaks JSON (forms are read too, for the browsable API, but a form cannot carry what
        # the JSON bodies do: nested objects, null, a JSON object for metadata). A view that reads
        # something else, like the upload's multipart, says so with its own parser_classes.
        media_types = super().map_parsers()
        return ["application/json"] if "application/json" in media_types else media_types

    def _get_serializer_field_meta(self, field, direction):
        # A text field that refuses "" says so (drf-spectacular only does when it splits every component
        # in two, which would rename them all); "" in an answer is still allowed, so requests only.
        meta = super()._get_serializer_field_meta(field, direction)
        refuses_blank = isinstance(field, serializers.CharField) and not (field.allow_blank or field.read_only)
        if direction == "request" and refuses_blank:
            meta.setdefault("minLength", 1)
        return meta

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        for status in sorted(self._implied_error_statuses()):
            if str(status) not in responses:
                responses[str(status)] = self._get_response_for_code(error_response(status), str(status))
        return dict(sorted(responses.items()))

    def _implied_error_statuses(self) -> set[int]:
        # Any credential presented is checked, even where none is needed; any Accept is negotiated; any
        # query string is measured; and any request may find the database down.
        statuses = {401, 406, 414, 503}
        parameters = self._get_parameters()
        if any(parameter["in"] == "path" for parameter in parameters):
            statuses.add(404)
        if any(parameter["in"] == "query" and parameter["name"] == "page" for parameter in parameters):
            statuses.add(404)  # a page past the end, or not a number
        if any(parameter["in"] == "query" and parameter["name"] != "page" for parameter in parameters):
            statuses.add(400)
        if self.method in _UNSAFE:
            # SessionAuthentication enforces CSRF on unsafe methods; a concurrent write can conflict.
            statuses |= {403, 409}
        if self.method in ("POST", "PUT", "PATCH") and self._get_request_body():
            statuses |= {400, 413, 415}
        if self.view.get_throttles():
            statuses.add(429)
        return statuses


def _sse(event: str, data: dict[str, Any]) -> str:
    return f"event: {event}\ndata: {json.dumps(data)}\n\n"


_SESSION = "3f1c2a9e-5b7d-4c1e-9a52-0d6e8f4b7a10"
_CONTEXT_ITEM = {
    "uri": "viking://resources/users/7/documents/5b0e.../chunk_0003",
    "doc_id": "5b0e6f5e-2f7a-4a43-8d0b-1c2d3e4f5a6b",
    "chunk_id": "chunk_0003",
    "level": "L1",
    "text": "Descale the kettle every four weeks with citric acid.",
    "abstract": "Descaling instructions.",
    "overview": "Descale the kettle every four weeks with citric acid.",
    "score": 0.82,
    "source": "hybrid",
    "match_reason": "descale, kettle",
    "title": "Aurora kettle manual",
    "origin": "document",
}

CHAT_STREAM_DESCRIPTION = (
    "The answer as `text/event-stream`, in order: one `context` event "
    "(`{context, session_id, retrieval_error?, search_trace?}`), any number of `token` events "
    "(`{token, session_id}`), one `mood` event (`{mood, mood_reason, session_id}`: `confident`, "
    "`uncertain` or `apologetic`, from how well the answer is grounded), then `done` "
    "(`{message, session_id, retrieval_error?}`) or `error` (`{error, code, session_id}`). Each event is "
    "`event: <name>` then `data: <JSON>` and a blank line; lines starting with `:` are comments (the "
    "stream opens with one, and one is sent every `SSE_KEEP_ALIVE_S` seconds while nothing else is ready), "
    "which SSE clients skip. Bad input is refused before the stream starts, as JSON with a 4xx status; "
    "`Accept: text/event-stream`, `*/*`, `application/json` or none are all served."
)


# Before OpenAPI 3.2's itemSchema, the schema of an event-stream response describes one event, read as
# its fields (event, data, id, retry), as schemathesis and 3.2 tooling read it.
SSE_EVENT = {
    "type": "object",
    "required": ["event", "data"],
    "properties": {
        "event": {"type": "string", "enum": ["context", "token", "mood", "done", "error"]},
        "data": {
            "type": "string",
            "description": "A JSON object: `context` `{context, session_id, retrieval_error?, search_trace?}`, "
            "`token` `{token, session_id}`, `mood` `{mood, mood_reason, session_id}`, "
            "`done` `{message, session_id, retrieval_error?}`, `error` `{error, code, session_id}`.",
        },
    },
}


def chat_stream_response() -> OpenApiResponse:
    """The chat's server-sent events, with a real turn and a failed one as examples."""
    turn = (
        _sse("context", {"context": [_CONTEXT_ITEM], "session_id": _SESSION})
        + _sse("token", {"token": "Descale it ", "session_id": _SESSION})
        + _sse("token", {"token": "every four weeks.", "session_id": _SESSION})
        + _sse("mood", {"mood": "confident", "mood_reason": "Grounded in 1 strong source.", "session_id": _SESSION})
        + _sse("done", {"message": "Descale it every four weeks.", "session_id": _SESSION})
    )
    failed = (
        _sse("context", {"context": [], "session_id": _SESSION})
        + _sse("mood", {"mood": "apologetic", "mood_reason": "The model failed.", "session_id": _SESSION})
    ) + _sse(
        "error",
        {
            "error": "The model could not answer; your message was saved.",
            "code": "generation_failed",
            "session_id": _SESSION,
        },
    )
    return OpenApiResponse(
        response=SSE_EVENT,
        description=CHAT_STREAM_DESCRIPTION,
        examples=[
            OpenApiExample("answered", value=turn, media_type="text/event-stream"),
            OpenApiExample("model failed", value=failed, media_type="text/event-stream"),
        ],
    )


WEBSOCKET = {
    "path": "/ws/chat/",
    "description": (
        "Chat over a websocket, authenticated like the rest of the API (the browser's session cookie, an "
        "`Authorization: Token <key>` header, or `?token=<key>`); a socket without a valid credential is closed "
        'with code 4401. The client sends `{"type": "chat", ...}` with the body of `POST /api/ai/chat` and '
        "receives the events of `POST /api/ai/chat/stream` as JSON objects with a `type` field: `context`, any "
        "number of `token`, one `mood`, then `done` or `error` (`{error, code, session_id, details?}`). "
        '`{"type": "cancel"}` stops the answer in flight; `{"type": "ping"}` is answered with `{"type": "pong"}`. '
        "A frame refused while an answer streams gets a `rejected` event, which does not end that answer. "
        "Another user's session or document is refused as if it did not exist. The socket also tells its user "
        "of their own documents' status (`document` events) and of commits (`commit` events, with the memory "
        "diff); while Redis or the database is down it sends one `error` with the code `unavailable` and "
        "goes on serving."
    ),
    "client_messages": {
        "chat": {"type": "chat", "message": "How often should I descale it?", "session_id": _SESSION},
        "cancel": {"type": "cancel"},
        "ping": {"type": "ping"},
    },
    "server_events": {
        "context": {"type": "context", "context": [_CONTEXT_ITEM], "session_id": _SESSION},
        "token": {"type": "token", "token": "Descale it ", "session_id": _SESSION},
        "mood": {
            "type": "mood",
            "mood": "confident",
            "mood_reason": "Grounded in 1 strong source.",
            "session_id": _SESSION,
        },
        "done": {"type": "done", "message": "Descale it every four weeks.", "session_id": _SESSION},
        "document": {
            "type": "document",
            "doc_id": "5b0e6f5e-2f7a-4a43-8d0b-1c2d3e4f5a6b",
            "title": "Aurora kettle manual",
            "status": "ready",
            "error": "",
            "node_count": 12,
        },
        "commit": {
            "type": "commit",
            "session_id": _SESSION,
            "archive_uri": f"viking://session/{_SESSION}/history/archive_001",
            "abstract": "Descaling the Aurora kettle.",
            "memory_diff": {"created": [], "updated": [], "unchanged": []},
        },
        "error": {"type": "error", "error": "No such session.", "code": "session_not_found", "session_id": None},
        "rejected": {
            "type": "rejected",
            "error": "An answer is already in flight; cancel it first.",
            "code": "busy",
            "session_id": None,
        },
        "pong": {"type": "pong"},
    },
}


# How every list of the API is bounded (the figures are those of sessions_app.api.paging and DRF's PAGE_SIZE).
LISTS_DESCRIPTION = (
    "**Lists come in pages.** `GET /api/sessions`, `/api/memories` and `/api/documents` take `?page=` "
    "(50 a page) and answer `{count, next, previous, results}`. A session's messages and archives are paged "
    "by cursor: `GET /api/sessions/{id}` holds the latest 50 messages and archives with a "
    "`messages_previous` (`archives_previous`) cursor, and `GET /api/sessions/{id}/messages?cursor=&limit=` "
    "(`/archives`) pages through them, oldest first, 50 a page by default and at most 200, a page also "
    "stopping before 2 MB of text and metadata. `GET /api/fs/ls` takes `offset` and `limit` (500, at most "
    "5,000). Metadata (a session's, a message's) is a JSON object of at most 32 levels and "
    "`METADATA_MAX_BYTES`; no key or text anywhere may hold a NUL character or a lone UTF-16 surrogate."
)


def document_websocket(result: dict[str, Any], generator, request, public) -> dict[str, Any]:
    """A postprocessing hook: OpenAPI 3.0 has no words for a websocket, so its events go in the API's
    description and, machine-readably, in an ``x-websockets`` extension."""
    result["info"]["description"] = (
        result["info"].get("description", "")
        + '\n\nErrors are JSON `{"error": {"code", "message", "details"}}` with a 4xx status (503 when a '
        "service the answer needs is down). A path that exists, asked with a method it does not serve, "
        "answers 405 in the same shape.\n\n"
        f"{LISTS_DESCRIPTION}\n\n"
        f"**WebSocket `{WEBSOCKET['path']}`**: {WEBSOCKET['description']}"
    )
    result["x-websockets"] = {WEBSOCKET["path"]: WEBSOCKET}
    return result
