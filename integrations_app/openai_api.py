"""The OpenAI-compatible API at /v1: ``GET /v1/models``, ``GET /v1/models/{id}`` and
``POST /v1/chat/completions``, for chat front-ends and agent frameworks that speak OpenAI's API.

A request is one turn of the chat (``chat_app.streaming.chat_events``): the last user message is the
turn, answered from the user's documents, memories and earlier conversations by the configured model or
the built-in engine; the session it continues is found by ``openai_sessions``. The key is the user's API
token sent as ``Authorization: Bearer``; the body's ``user`` field is ignored. Every error, these routes'
own 401 and 404 included, is in OpenAI's shape, not the rest of the API's.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import AsyncIterator
from typing import Any

from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse, StreamingHttpResponse
from django.utils.decorators import method_decorator
from django.views import View
from django.views.decorators.csrf import csrf_exempt

from accounts_app.credentials import SIGNED_OUT_MESSAGE, STREAM_CHECK_INTERVAL_S, credential_for_key, credential_holds
from chat_app import events
from chat_app.api.streaming import EVENT_STREAM, while_signed_in, with_keep_alive
from chat_app.concurrency import Cancellation
from chat_app.services import chat_prepare
from chat_app.streaming import chat_events
from foundation.ai import estimate_tokens
from foundation.connections import release_database_connections
from foundation.exceptions import (
    DATABASE_DOWN_MESSAGE,
    ConflictError,
    DomainError,
    NotFoundError,
    TooLargeError,
    UnavailableError,
    is_database_down,
)
from integrations_app import openai_sessions as conversations
from integrations_app import openai_wire as wire
from integrations_app.openai_client_tasks import client_task_answer, is_client_task

logger = logging.getLogger(__name__)

RETRY_AFTER = {"Retry-After": "5"}
NO_KEY = (
    "You didn't provide an API key. Send your Recollect API token in an Authorization header using Bearer "
    "auth (Authorization: Bearer YOUR_TOKEN); tokens are made on the Account page."
)
BAD_KEY = "Incorrect API key provided. Make one on the Account page (/account/) of your Recollect."
# How a domain error leaves these routes: status, and OpenAI's error type.
_DOMAIN: list[tuple[type[DomainError], int, str]] = [
    (NotFoundError, 404, wire.INVALID_REQUEST),
    (ConflictError, 409, wire.INVALID_REQUEST),
    (TooLargeError, 413, wire.INVALID_REQUEST),
    (UnavailableError, 503, wire.SERVER_ERROR),
]


def _error_response(error: wire.OpenAIError) -> JsonResponse:
    return JsonResponse(error.body(), status=error.status, headers=error.headers)


def openai_error_of(exc: Exception) -> wire.OpenAIError:
    """Any failure as OpenAI's error: the product's domain errors keep their code; an outage is a 503."""
    if isinstance(exc, wire.OpenAIError):
        return exc
    if isinstance(exc, DomainError):
        status, kind = next(((s, k) for cls, s, k in _DOMAIN if isinstance(exc, cls)), (400, wire.INVALID_REQUEST))
        headers = RETRY_AFTER if status == 503 else None
        return wire.OpenAIError(exc.message, status=status, type=kind, code=exc.code, headers=headers)
    if is_database_down(exc):
        return wire.OpenAIError(
            DATABASE_DOWN_MESSAGE, status=503, type=wire.SERVER_ERROR, code="unavailable", headers=RETRY_AFTER
        )
    logger.exception("/v1: the request failed")
    return wire.OpenAIError(
        "The server had an error while processing your request; it has been logged.",
        status=500,
        type=wire.SERVER_ERROR,
    )


def _answered_in_openai_shape(handler):
    async def handle(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        try:
            return await handler(self, request, *args, **kwargs)
        except Exception as exc:  # every failure is answered in the shape these clients read
            return _error_response(openai_error_of(exc))

    return handle


async def _signed_in(request: HttpRequest):
    """The token's user and credential; the key comes as ``Bearer`` (or the API's ``Token``)."""
    keyword, _, key = request.headers.get("Authorization", "").partition(" ")
    unauthorized = {"WWW-Authenticate": "Bearer"}
    if keyword.lower() not in ("bearer", "token") or not key.strip():
        raise wire.OpenAIError(NO_KEY, status=401, headers=unauthorized)
    found = await sync_to_async(credential_for_key)(key.strip())
    if found is None:
        raise wire.OpenAIError(BAD_KEY, status=401, code="invalid_api_key", headers=unauthorized)
    return found


@method_decorator(csrf_exempt, name="dispatch")  # a key in a header, never a cookie, signs these in
class OpenAIView(View):
    http_method_names = ["get", "post", "options"]

    async def http_method_not_allowed(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        error = wire.OpenAIError(f"{request.method} is not allowed on {request.path}.", status=405)
        return _error_response(error)


class ModelsView(OpenAIView):
    """``GET /v1/models``: ``recollect`` (the user's whole memory), and ``recollect:<agent_id>`` for each
    agent of the user's sessions (the chat's ``agent_id``: its sessions and memories)."""

    http_method_names = ["get"]

    @_answered_in_openai_shape
    async def get(self, request: HttpRequest) -> HttpResponse:
        owner, _ = await _signed_in(request)
        return JsonResponse({"object": "list", "data": await sync_to_async(_models)(owner)})


class ModelView(OpenAIView):
    """``GET /v1/models/{id}``: one of the models listed."""

    http_method_names = ["get"]

    @_answered_in_openai_shape
    async def get(self, request: HttpRequest, model_id: str) -> HttpResponse:
        owner, _ = await _signed_in(request)
        wire.agent_of(model_id)  # an id that can never be a model is refused the same way
        model = next((m for m in await sync_to_async(_models)(owner) if m["id"] == model_id), None)
        if model is None:
            raise wire.OpenAIError(
                f"The model `{model_id}` does not exist.", status=404, param="model", code="model_not_found"
            )
        return JsonResponse(model)


def _models(owner) -> list[dict[str, Any]]:
    def model(model_id: str, created) -> dict[str, Any]:
        return {"id": model_id, "object": "model", "created": int(created.timestamp()), "owned_by": wire.OWNED_BY}

    agents = conversations.agents_of(owner=owner)
    return [
        model(wire.BASE_MODEL, owner.date_joined),
        *(model(f"{wire.BASE_MODEL}{wire.AGENT_SEPARATOR}{agent}", first) for agent, first in agents),
    ]


def _body(request: HttpRequest) -> bytes:
    try:
        declared = int(request.META.get("CONTENT_LENGTH") or 0)
    except ValueError:
        raise wire.OpenAIError("The Content-Length header is not a number.") from None
    if declared > settings.API_MAX_BODY_BYTES:
        raise wire.OpenAIError(
            f"The request body is {declared} bytes; the limit is {settings.API_MAX_BODY_BYTES}.",
            status=413,
            code="too_large",
        )
    return request.body


def _prepare(owner, completion: wire.Completion):
    """Finds the session, refuses bad input, and records the turns the session lacks: the chat request,
    its target, and where it went. The request's connections are handed back: the turn has its own."""
    try:
        placement = conversations.conversation_place(owner=owner, completion=completion)
        chat_request = conversations.chat_request_for(completion, placement)
        target = chat_prepare(owner=owner, request=chat_request)
        conversations.conversation_record_missing(placement=placement)
        return chat_request, target, placement
    finally:
        release_database_connections()


def _mark(session_id: str, placement) -> None:
    try:
        conversations.conversation_mark(session_id=session_id, placement=placement)
    finally:
        release_database_connections()


class ChatCompletionsView(OpenAIView):
    """``POST /v1/chat/completions``: one chat turn, answered whole or streamed as chunks."""

    http_method_names = ["post"]

    @_answered_in_openai_shape
    async def post(self, request: HttpRequest) -> HttpResponse:
        owner, credential = await _signed_in(request)
        completion = wire.completion_from(wire.parse_body(await sync_to_async(_body)(request)), request.headers)
        if is_client_task(completion):
            text = await sync_to_async(client_task_answer)(owner=owner, completion=completion)
            return _client_task_response(completion, text)
        chat_request, target, placement = await sync_to_async(_prepare)(owner, completion)
        cancel = Cancellation()
        turn = chat_events(owner=owner, request=chat_request, target=target, cancel=cancel, streamed=completion.stream)
        first = await anext(turn)  # "busy" is a 503 here, before anything is sent
        session_id = first.data.get("session_id") or ""
        await sync_to_async(_mark)(session_id, placement)
        if first.type == events.ERROR:
            await turn.aclose()
            status = 503 if first.data.get("code") == "unavailable" else 500
            return _error_response(wire.OpenAIError(first.data["error"], status=status, type=wire.SERVER_ERROR))
        answer = _Answer(completion=completion, session_id=session_id, context=first.data.get("context", []))
        if completion.stream:
            return _streamed(answer, turn, credential=credential, cancel=cancel)
        async with contextlib.aclosing(turn):
            async for event in turn:
                answer.take(event)
        if answer.error:
            raise wire.OpenAIError(answer.error, status=503, type=wire.SERVER_ERROR, code="generation_failed")
        return JsonResponse(answer.whole(), headers=answer.headers())


class _Answer:
    """A turn's answer as it arrives, and what the client is told of it."""

    def __init__(self, *, completion: wire.Completion, session_id: str, context: list[dict]) -> None:
        self.completion, self.session_id = completion, session_id
        self.sources = [wire.source_of(item) for item in context]
        self.pieces: list[str] = []
        self.done: dict[str, Any] = {}
        self.mood: dict[str, Any] = {}
        self.error = ""

    def take(self, event) -> None:
        if event.type == events.TOKEN:
            self.pieces.append(event.data["token"])
        elif event.type == events.MOOD:
            self.mood = event.data
        elif event.type == events.DONE:
            self.done = event.data
        elif event.type == events.ERROR:
            self.error = event.data.get("error") or "The turn failed."

    @property
    def text(self) -> str:
        return "".join(self.pieces)

    def usage(self) -> dict[str, int]:
        return wire.usage(self.done.get("prompt_tokens", 0), estimate_tokens(self.text))

    def extra(self) -> dict[str, Any]:
        remembered = [
            {key: memory.get(key) for key in ("uri", "category", "content", "change")}
            for memory in self.done.get("remembered", [])
        ]
        return {
            "session_id": self.session_id,
            "recorded": True,
            "sources": self.sources,
            "remembered": remembered,
            "mood": self.mood.get("mood"),
        }

    def headers(self) -> dict[str, str]:
        headers = {wire.SESSION_HEADER: self.session_id}
        if self.sources:
            headers[wire.SOURCES_HEADER] = wire.sources_header(self.sources)
        return headers

    def whole(self) -> dict[str, Any]:
        return wire.completion_object(self.completion, text=self.text, extra=self.extra(), tokens=self.usage())

    def error_frame(self, message: str, code: str = "generation_failed") -> bytes:
        body = wire.OpenAIError(message, status=503, type=wire.SERVER_ERROR, code=code).body()
        body["error"]["session_id"] = self.session_id
        return wire.sse(body)


async def _chunks(answer: _Answer, turn: AsyncIterator) -> AsyncIterator[bytes]:
    """The turn's events as ``chat.completion.chunk`` frames: the role, the pieces, the end (with the
    sources), the usage when asked, then ``[DONE]``; a failure ends the stream with an error object."""
    completion = answer.completion
    yield wire.sse(wire.chunk(completion, delta={"role": "assistant", "content": ""}))
    async with contextlib.aclosing(turn):
        async for event in turn:
            answer.take(event)
            if event.type == events.TOKEN:
                yield wire.sse(wire.chunk(completion, delta={"content": event.data["token"]}))
    if answer.error:
        yield answer.error_frame(answer.error)
        return
    yield wire.sse(wire.chunk(completion, finish="stop", recollect=answer.extra()))
    if completion.include_usage:
        yield wire.sse({**wire.chunk(completion), "choices": [], "usage": answer.usage()})
    yield wire.DONE


def _streamed(answer: _Answer, turn: AsyncIterator, *, credential, cancel: Cancellation) -> StreamingHttpResponse:
    check = sync_to_async(credential_holds)

    def ended() -> bytes:
        cancel.cancel("disconnected")  # the answer stops here, as if the client had gone
        return answer.error_frame(SIGNED_OUT_MESSAGE, code="signed_out")

    frames = while_signed_in(
        _chunks(answer, turn), still_good=lambda: check(credential), interval=STREAM_CHECK_INTERVAL_S, ended=ended
    )
    response = StreamingHttpResponse(
        with_keep_alive(frames, interval=settings.SSE_KEEP_ALIVE_S), content_type=EVENT_STREAM, headers=answer.headers()
    )
    response["Cache-Control"] = "no-cache"
    response["X-Accel-Buffering"] = "no"  # a proxy in front must not hold the stream back
    return response


def _client_task_response(completion: wire.Completion, text: str) -> HttpResponse:
    """A client's own request, answered whole or as one chunk; nothing was recorded."""
    prompt = sum(estimate_tokens(message["content"]) for message in completion.sent)
    tokens = wire.usage(prompt, estimate_tokens(text))
    extra = {"session_id": None, "recorded": False, "sources": [], "remembered": [], "mood": None}
    if not completion.stream:
        return JsonResponse(wire.completion_object(completion, text=text, extra=extra, tokens=tokens))
    frames = [
        wire.sse(wire.chunk(completion, delta={"role": "assistant", "content": text})),
        wire.sse(wire.chunk(completion, finish="stop", recollect=extra)),
        *([wire.sse({**wire.chunk(completion), "choices": [], "usage": tokens})] if completion.include_usage else []),
        wire.DONE,
    ]
    return HttpResponse(b"".join(frames), content_type=EVENT_STREAM, headers={"Cache-Control": "no-cache"})


@csrf_exempt  # nothing is done here: an unknown URL is a 404 whatever the method
async def not_found(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
    """Anything else under /v1/: OpenAI's 404."""
    error = wire.OpenAIError(f"Unknown request URL: {request.method} {request.path}.", status=404, code="unknown_url")
    return _error_response(error)
