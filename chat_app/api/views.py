"""The Chat API: one turn answered whole as JSON, or as server-sent events; thin views over
``chat_app.services`` and ``chat_app.streaming``."""

from __future__ import annotations

from asgiref.sync import sync_to_async
from django.conf import settings
from django.http import StreamingHttpResponse
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from accounts_app.credentials import (
    SIGNED_OUT_CODE,
    SIGNED_OUT_MESSAGE,
    STREAM_CHECK_INTERVAL_S,
    Credential,
    credential_for_session,
    credential_holds,
)
from chat_app import events
from chat_app import services as chat
from chat_app.api import serializers as s
from chat_app.api.streaming import EVENT_STREAM, EventStreamNegotiation, while_signed_in, with_keep_alive
from chat_app.concurrency import Cancellation
from chat_app.exceptions import GenerationFailed
from chat_app.streaming import chat_events
from foundation.api import validated
from foundation.db import release_database_connections
from foundation.exceptions import DomainError
from foundation.schema import chat_stream_response, errors


def _chat_request(request: Request) -> tuple[chat.ChatRequest, chat.ChatTarget]:
    data = validated(s.ChatInSerializer, request.data)
    chat_request = chat.ChatRequest(**data)
    return chat_request, chat.chat_prepare(owner=request.user, request=chat_request)


class ChatView(APIView):
    @extend_schema(
        request=s.ChatInSerializer,
        responses={
            200: s.ChatOutSerializer,
            **errors(
                not_found="No session or document with that id for this user.",
                conflict="replace_last: the last exchange is already archived.",
                unavailable="The model could not answer (the message was saved), or too many answers are in flight.",
            ),
        },
        summary="One chat turn, answered whole",
    )
    def post(self, request: Request) -> Response:
        chat_request, target = _chat_request(request)
        answer = chat.chat_reply(owner=request.user, request=chat_request, target=target)
        if "error" in answer:
            raise GenerationFailed(answer["error"], details={"session_id": answer.get("session_id")})
        return Response(answer)


class ChatStreamView(APIView):
    content_negotiation_class = EventStreamNegotiation

    @extend_schema(
        request=s.ChatInSerializer,
        responses={
            (200, "text/event-stream"): chat_stream_response(),
            **errors(
                not_found="No session or document with that id for this user.",
                conflict="replace_last: the last exchange is already archived.",
                unavailable="Too many answers are in flight on this server; retry in a moment.",
            ),
        },
        summary="One chat turn as server-sent events: context, token..., mood, then done or error",
    )
    def post(self, request: Request) -> StreamingHttpResponse:
        chat_request, target = _chat_request(request)  # bad input is a plain 4xx, before the stream starts
        owner = request.user
        # Django hands a request's connection back only when its response closes, which for a stream
        # is when the answer ends; the turn's own thread needs one meanwhile. Holding both would let a
        # handful of open streams exhaust the pool and stall every request until its timeout.
        release_database_connections()

        credential = _credential_of(request)
        cancellation = Cancellation()

        async def stream():
            try:
                async for event in chat_events(owner=owner, request=chat_request, target=target, cancel=cancellation):
                    yield events.sse_frame(event.type, event.data)
            except DomainError as exc:
                yield events.sse_frame(events.ERROR, events.error_data(exc.message, code=exc.code))

        def ended() -> bytes:
            cancellation.cancel("disconnected")  # the answer stops here, as if the client had gone
            return events.sse_frame(events.ERROR, events.error_data(SIGNED_OUT_MESSAGE, code=SIGNED_OUT_CODE))

        signed_in = while_signed_in(
            stream(), still_good=_credential_holds(credential), interval=STREAM_CHECK_INTERVAL_S, ended=ended
        )
        response = StreamingHttpResponse(
            with_keep_alive(signed_in, interval=settings.SSE_KEEP_ALIVE_S), content_type=EVENT_STREAM
        )
        response["Cache-Control"] = "no-cache"
        response["X-Accel-Buffering"] = "no"  # a proxy in front must not hold the stream back
        return response


def _credential_of(request: Request) -> Credential | None:
    """What signed the request in: its token (``request.auth``) or its browser session."""
    if isinstance(request.auth, Credential):
        return request.auth
    return credential_for_session(user=request.user, session_key=getattr(request.session, "session_key", None))


def _credential_holds(credential: Credential | None):
    check = sync_to_async(credential_holds)
    return lambda: check(credential)
