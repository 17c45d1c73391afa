"""The Retrieval API: thin views over retrieval_app.services."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api import validated
from retrieval_app import services
from retrieval_app.api import serializers as s


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
