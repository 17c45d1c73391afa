"""The Retrieval API: thin views over ``retrieval_app.services`` and ``retrieval_app.recall``."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from foundation.api import validated
from foundation.schema import errors
from retrieval_app import recall
from retrieval_app import services as search
from retrieval_app.api import serializers as s
from retrieval_app.wire import render_hits
from sessions_app.selectors import session_get


class _SearchView(APIView):
    """find and search share their body and their answer; search adds a session."""

    serializer_class = s.FindInSerializer

    def search(self, request: Request, data: dict, **common) -> search.SearchResult:
        return search.retrieval_find(owner=request.user, **common)

    def post(self, request: Request) -> Response:
        data = validated(self.serializer_class, request.data)
        found = self.search(
            request,
            data,
            query=data["query"],
            target_uri=data["target_uri"],
            limit=data["limit"],
            score_threshold=data["score_threshold"],
            options=search.SearchOptions(mode=data["mode"], fusion=data["fusion"]),
        )
        answer = {"results": render_hits(found.hits), "trace_id": str(found.trace.id)}
        if found.query_plan:
            answer["query_plan"] = found.query_plan
        if data["debug_search_trace"]:
            answer["search_trace"] = found.trace_dict()
        return Response(answer)


class FindView(_SearchView):
    @extend_schema(
        request=s.FindInSerializer,
        responses=s.FindOutSerializer,
        summary="Search the user's documents under a URI, without a session",
    )
    def post(self, request: Request) -> Response:
        return super().post(request)


class SearchView(_SearchView):
    serializer_class = s.SearchInSerializer

    def search(self, request: Request, data: dict, **common) -> search.SearchResult:
        session = session_get(owner=request.user, session_id=data["session_id"])
        return search.retrieval_search(owner=request.user, session=session, **common)

    @extend_schema(
        request=s.SearchInSerializer,
        responses={200: s.SearchOutSerializer, **errors(not_found="No session with that id for this user.")},
        summary="Session-aware search over documents, memories and earlier conversations",
    )
    def post(self, request: Request) -> Response:
        return super().post(request)


class RecallView(APIView):
    @extend_schema(
        request=s.RecallInSerializer,
        responses=inline_serializer(
            "Recall",
            {
                "messages": serializers.ListField(child=serializers.DictField()),
                "source": serializers.ChoiceField(choices=["vector", "keyword", "hybrid"]),
                "token_estimate": serializers.IntegerField(),
                "count": serializers.IntegerField(),
            },
        ),
        summary="Messages from earlier sessions relevant to a query",
    )
    def post(self, request: Request) -> Response:
        params = validated(s.RecallInSerializer, request.data)
        return Response(recall.memory_recall(owner=request.user, **params))
