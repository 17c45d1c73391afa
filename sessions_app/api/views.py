"""The Sessions and Memory API: thin views over sessions_app.selectors and sessions_app.services."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.pagination import PageNumberPagination
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from foundation.api import validated
from sessions_app import selectors, services
from sessions_app.api import serializers as s
from sessions_app.api.paging import PAGE_DEFAULT_SIZE, PAGE_PARAMETERS, PageQuerySerializer, page_bounds, page_cursors


def _session_detail(session) -> dict:
    """The session with its latest page of messages and of archives; earlier ones are a cursor away."""
    messages = selectors.session_message_page(session=session, limit=PAGE_DEFAULT_SIZE)
    archives = selectors.session_archive_page(session=session, limit=PAGE_DEFAULT_SIZE)
    message_cursors, archive_cursors = page_cursors(messages), page_cursors(archives)
    return {
        **s.SessionSerializer(session).data,
        "rolling_summary": session.rolling_summary,
        "messages": s.MessageSerializer(messages.rows, many=True).data,
        "messages_previous": message_cursors["previous"],
        "messages_next": message_cursors["next"],
        "messages_count": selectors.session_message_count(session=session),
        "archives": s.ArchiveSerializer(archives.rows, many=True).data,
        "archives_previous": archive_cursors["previous"],
        "archives_next": archive_cursors["next"],
        "archives_count": selectors.session_archive_count(session=session),
    }


def _page_answer(page, serializer_class, count: int) -> dict:
    return {"count": count, **page_cursors(page), "results": serializer_class(page.rows, many=True).data}


class SessionListView(APIView):
    # Declared so that the schema shows the page envelope the answer really has.
    pagination_class = PageNumberPagination

    @extend_schema(
        parameters=[s.SessionListQuerySerializer],
        responses=s.SessionSerializer(many=True),
        summary="The user's sessions, newest activity first",
    )
    def get(self, request: Request) -> Response:
        # A plain dict, not the QueryDict: an empty parameter is then a value to validate, not an absent one.
        query = validated(s.SessionListQuerySerializer, request.query_params.dict())
        sessions = selectors.session_list(owner=request.user, agent_id=query.get("agent_id"), q=query["q"])
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(sessions, request, view=self)
        return paginator.get_paginated_response(s.SessionSerializer(page, many=True).data)

    @extend_schema(request=s.SessionCreateSerializer, responses={201: s.SessionSerializer}, summary="Start a session")
    def post(self, request: Request) -> Response:
        session = services.session_create(owner=request.user, **validated(s.SessionCreateSerializer, request.data))
        return Response(s.SessionSerializer(session).data, status=201)


class SessionDetailView(APIView):
    @extend_schema(
        responses=s.SessionDetailSerializer,
        summary="A session with its latest messages and archives",
        description=f"`messages` and `archives` are the latest {PAGE_DEFAULT_SIZE} of each (fewer when they "
        "would pass a few megabytes), oldest first. `messages_previous` (`archives_previous`) is the cursor "
        "of the page before them, null when they start at the first; page on with "
        "`GET /api/sessions/{id}/messages?cursor=` (`/archives?cursor=`).",
    )
    def get(self, request: Request, session_id: str) -> Response:
        return Response(_session_detail(selectors.session_get(owner=request.user, session_id=session_id)))

    @extend_schema(request=s.SessionUpdateSerializer, responses=s.SessionSerializer, summary="Rename a session")
    def patch(self, request: Request, session_id: str) -> Response:
        session = selectors.session_get(owner=request.user, session_id=session_id)
        session = services.session_update(session=session, **validated(s.SessionUpdateSerializer, request.data))
        return Response(s.SessionSerializer(session).data)

    @extend_schema(responses={204: None}, summary="Delete a session, its messages, archives and own memories")
    def delete(self, request: Request, session_id: str) -> Response:
        services.session_delete(session=selectors.session_get(owner=request.user, session_id=session_id))
        return Response(status=204)


class SessionMessagesView(APIView):
    @extend_schema(
        parameters=PAGE_PARAMETERS,
        responses=s.MessagePageSerializer,
        summary="A page of the session's messages, oldest first",
        description="Without a cursor, the first page (the oldest messages). `next` is the cursor of the page "
        "after it, `previous` of the page before it; each is null at that end. Following `next` from the "
        "first page, or `previous` from the session's `messages_previous`, reads every message once, in order.",
    )
    def get(self, request: Request, session_id: str) -> Response:
        session = selectors.session_get(owner=request.user, session_id=session_id)
        bounds = page_bounds(validated(PageQuerySerializer, request.query_params.dict()))
        page = selectors.session_message_page(session=session, **bounds)
        count = selectors.session_message_count(session=session)
        return Response(_page_answer(page, s.MessageSerializer, count))

    @extend_schema(
        request=s.MessagesInSerializer,
        responses={
            201: inline_serializer("MessageIds", {"ids": serializers.ListField(child=serializers.IntegerField())})
        },
        summary="Record messages as given (imports and integrations); no reply is generated",
    )
    def post(self, request: Request, session_id: str) -> Response:
        session = selectors.session_get(owner=request.user, session_id=session_id)
        items = validated(s.MessagesInSerializer, request.data)["messages"]
        rows = services.message_bulk_create(session=session, messages=[services.NewMessage(**item) for item in items])
        return Response({"ids": [row.id for row in rows]}, status=201)


class SessionArchivesView(APIView):
    @extend_schema(
        parameters=PAGE_PARAMETERS,
        responses=s.ArchivePageSerializer,
        summary="A page of the session's archives, oldest first",
        description="Paged like the session's messages.",
    )
    def get(self, request: Request, session_id: str) -> Response:
        session = selectors.session_get(owner=request.user, session_id=session_id)
        bounds = page_bounds(validated(PageQuerySerializer, request.query_params.dict()))
        page = selectors.session_archive_page(session=session, **bounds)
        count = selectors.session_archive_count(session=session)
        return Response(_page_answer(page, s.ArchiveSerializer, count))


class SessionCommitView(APIView):
    @extend_schema(
        request=s.CommitInSerializer,
        responses=inline_serializer(
            "CommitResult",
            {
                "committed": serializers.BooleanField(),
                "message": serializers.CharField(),
                "archive": s.ArchiveSerializer(allow_null=True),
                "memories": s.MemorySerializer(many=True),
                "memory_diff": serializers.DictField(),
            },
        ),
        summary="Archive the uncommitted turns and extract long-term memories",
    )
    def post(self, request: Request, session_id: str) -> Response:
        session = selectors.session_get(owner=request.user, session_id=session_id)
        result = services.session_commit(session=session, **validated(s.CommitInSerializer, request.data))
        return Response(
            {
                "committed": result.committed,
                "message": result.reason or f"Archived {result.archive.message_count} messages.",
                "archive": s.ArchiveSerializer(result.archive).data if result.archive else None,
                "memories": s.MemorySerializer(result.memories, many=True).data,
                "memory_diff": result.memory_diff,
            }
        )


class SessionContextView(APIView):
    @extend_schema(
        parameters=[s.ContextQuerySerializer],
        responses=inline_serializer(
            "SessionContext",
            {
                "summary": serializers.CharField(),
                "summaries": serializers.ListField(child=serializers.CharField()),
                "recent_messages": serializers.ListField(child=serializers.DictField()),
            },
        ),
        summary="Session context for search: ranked archive summaries and recent turns",
    )
    def get(self, request: Request, session_id: str) -> Response:
        session = selectors.session_get(owner=request.user, session_id=session_id)
        query = validated(s.ContextQuerySerializer, request.query_params.dict())
        return Response(services.session_search_context(session=session, **query).as_dict())


class SessionHistoryView(APIView):
    @extend_schema(
        responses=inline_serializer(
            "SessionHistory",
            {
                "summary": serializers.CharField(),
                "summary_through_seq": serializers.IntegerField(),
                "turns": s.MessageSerializer(many=True),
                "token_estimate": serializers.IntegerField(),
                "pending_fold": serializers.IntegerField(
                    help_text="Turns older than the verbatim window not yet folded into the summary."
                ),
            },
        ),
        summary="What a model is handed of the session: the rolling summary, then recent turns verbatim",
    )
    def get(self, request: Request, session_id: str) -> Response:
        session = selectors.session_get(owner=request.user, session_id=session_id)
        history = selectors.session_history(session=session)
        return Response(
            {
                "summary": history.summary,
                "summary_through_seq": history.summary_through_seq,
                "turns": s.MessageSerializer(history.turns, many=True).data,
                "token_estimate": history.token_estimate,
                "pending_fold": history.pending_fold,
            }
        )


class SessionWorkingSetView(APIView):
    @extend_schema(
        responses=inline_serializer(
            "WorkingSet",
            {
                "resolved_terms": serializers.DictField(child=serializers.CharField()),
                "active_documents": serializers.ListField(child=serializers.CharField()),
                "active_sections": serializers.ListField(child=serializers.CharField()),
            },
        ),
        summary="The session's working set: resolved terms, active documents and sections",
    )
    def get(self, request: Request, session_id: str) -> Response:
        session = selectors.session_get(owner=request.user, session_id=session_id)
        return Response(services.working_set_get(session_id=str(session.id)).as_dict())

    @extend_schema(
        request=s.WorkingSetUpdateSerializer,
        responses=s.WorkingSetUpdateSerializer,
        summary="Merge terms, documents and sections into the working set",
    )
    def post(self, request: Request, session_id: str) -> Response:
        session = selectors.session_get(owner=request.user, session_id=session_id)
        update = validated(s.WorkingSetUpdateSerializer, request.data)
        state = services.working_set_update(
            session_id=str(session.id),
            resolved_terms=update["resolved_terms"],
            documents=update["active_documents"],
            sections=update["active_sections"],
        )
        return Response(state.as_dict())


class MemoryListView(APIView):
    pagination_class = PageNumberPagination

    @extend_schema(
        parameters=[s.MemoryQuerySerializer],
        responses=s.MemorySerializer(many=True),
        summary="The user's long-term memories",
    )
    def get(self, request: Request) -> Response:
        query = validated(s.MemoryQuerySerializer, request.query_params.dict())
        memories = selectors.memory_list(owner=request.user, **query)
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(memories, request, view=self)
        return paginator.get_paginated_response(s.MemorySerializer(page, many=True).data)

    @extend_schema(
        request=s.MemoryCreateSerializer,
        responses={201: s.MemorySerializer, 200: s.MemorySerializer},
        summary="Add a memory by hand",
        description="201 with the new memory. When the user already has a memory with this category and key "
        "(given, or derived from the content), that memory is updated in place instead, 200, and the text it "
        "replaces is kept in its history marked as a person's correction. It is embedded by a worker, and found "
        "by its words at once.",
    )
    def post(self, request: Request) -> Response:
        params = validated(s.MemoryCreateSerializer, request.data)
        memory, created = services.memory_create(owner=request.user, **params)
        return Response(s.MemorySerializer(memory).data, status=201 if created else 200)


class MemoryDetailView(APIView):
    @extend_schema(responses=s.MemorySerializer, summary="One memory, with the texts it replaced")
    def get(self, request: Request, memory_id: str) -> Response:
        memory = selectors.memory_get(owner=request.user, memory_id=memory_id)
        return Response(s.MemorySerializer(memory).data)

    @extend_schema(
        request=s.MemoryUpdateSerializer,
        responses=s.MemorySerializer,
        summary="Correct a memory's text; the text it replaces is kept in its history",
    )
    def patch(self, request: Request, memory_id: str) -> Response:
        memory = selectors.memory_get(owner=request.user, memory_id=memory_id)
        services.memory_edit(memory=memory, **validated(s.MemoryUpdateSerializer, request.data))
        return Response(s.MemorySerializer(selectors.memory_get(owner=request.user, memory_id=memory_id)).data)

    @extend_schema(responses={204: None}, summary="Forget a memory")
    def delete(self, request: Request, memory_id: str) -> Response:
        services.memory_delete(memory=selectors.memory_get(owner=request.user, memory_id=memory_id))
        return Response(status=204)
