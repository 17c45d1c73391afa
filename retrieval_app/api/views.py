"""The Retrieval and Chat API: thin views over retrieval_app.services and retrieval_app.chat."""

from __future__ import annotations

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api import validated
from config.exceptions import DomainError
from retrieval_app import chat, events, services
from retrieval_app.api import serializers as s
from retrieval_app.exceptions import GenerationFailed


def _common(data: dict) -> dict:
    return {
        "query": data["query"],
        "target_uri": data["target_uri"],
        "limit": data["limit"],
        "score_threshold": data["score_threshold"],
        "debug": data["debug_search_trace"],
        "options": services.SearchOptions(mode=data["mode"], fusion=data["fusion"]),
    }


class FindView(APIView):
    @extend_schema(
        request=s.FindInSerializer,
        responses=s.FindOutSerializer,
        summary="Search the user's documents under a URI, without a session",
    )
    def post(self, request: Request) -> Response:
        data = validated(s.FindInSerializer, request.data)
        return Response(services.retrieval_find(owner=request.user, **_common(data)))


class SearchView(APIView):
    @extend_schema(
        request=s.SearchInSerializer,
        responses=s.SearchOutSerializer,
        summary="Session-aware search over documents, memories and earlier conversations",
    )
    def post(self, request: Request) -> Response:
        data = validated(s.SearchInSerializer, request.data)
        return Response(services.retrieval_search(owner=request.user, session_id=data["session_id"], **_common(data)))


def _chat_request(request: Request) -> chat.ChatRequest:
    data = validated(s.ChatInSerializer, request.data)
    chat_request = chat.ChatRequest(**data)
    chat.chat_validate(owner=request.user, request=chat_request)
    return chat_request


class ChatView(APIView):
    @extend_schema(request=s.ChatInSerializer, responses=s.ChatOutSerializer, summary="One chat turn, answered whole")
    def post(self, request: Request) -> Response:
        answer = chat.chat_reply(owner=request.user, request=_chat_request(request))
        if "error" in answer:
            raise GenerationFailed(answer["error"], details={"session_id": answer.get("session_id")})
        return Response(answer)


class ChatStreamView(APIView):
    @extend_schema(
        request=s.ChatInSerializer,
        responses={(200, "text/event-stream"): OpenApiTypes.STR},
        summary="One chat turn as server-sent events: context, token..., then done or error",
    )
    def post(self, request: Request) -> StreamingHttpResponse:
        chat_request = _chat_request(request)  # bad input is a plain 4xx, before the stream starts
        owner = request.user

        async def stream():
            cancellation = chat.Cancellation()
            try:
                async for event in chat.chat_events(owner=owner, request=chat_request, cancel=cancellation):
                    yield events.sse_frame(event.type, event.data)
            except DomainError as exc:
                yield events.sse_frame(events.ERROR, events.error_data(exc.message, code=exc.code))

        response = StreamingHttpResponse(stream(), content_type="text/event-stream")
        response["Cache-Control"] = "no-cache"
        response["X-Accel-Buffering"] = "no"  # a proxy in front must not hold the stream back
        return response
