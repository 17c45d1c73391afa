"""The Documents API: thin views over documents_app.selectors and documents_app.services."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.pagination import PageNumberPagination
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from documents_app import selectors, services
from documents_app.api import serializers as s
from documents_app.exceptions import DocumentTooLarge, StorageFull
from documents_app.models import Document, DocumentNode
from documents_app.selectors import LEVELS
from foundation.api import validated
from foundation.parsers import refuse_oversized
from foundation.schema import errors


def _documents(owner, documents) -> list[dict]:
    """Documents as the API shows them, those waiting with their place in line and estimated wait."""
    queue = selectors.document_queue_places(owner=owner, documents=documents)
    return s.DocumentSerializer(documents, many=True, context={"queue": queue}).data


def _detail(owner, document) -> dict:
    root = selectors.document_root(document=document)
    return {
        **_documents(owner, [document])[0],
        "abstract": root.abstract if root else "",
        "overview": root.overview if root else "",
    }


class BoundedMultiPartParser(MultiPartParser):
    """An upload of at most DOCUMENT_MAX_BYTES (plus room for the multipart envelope)."""

    def parse(self, stream, media_type=None, parser_context=None):
        refuse_oversized(parser_context, limit=settings.DOCUMENT_MAX_BYTES + 64 * 1024, error=DocumentTooLarge)
        try:
            return super().parse(stream, media_type, parser_context)
        except OSError as exc:  # a large upload is spooled to a temporary file first, on a disk that may be full
            if services.is_disk_full(exc):
                raise StorageFull() from exc
            raise


class UploadView(APIView):
    parser_classes = [BoundedMultiPartParser]

    @extend_schema(
        request={"multipart/form-data": s.UploadSerializer},
        responses={
            202: s.DocumentSerializer,
            200: s.DocumentSerializer,
            **errors(
                bad_request="Not a file, or not a document this product can read (`unsupported_document`).",
                too_large="The file is larger than DOCUMENT_MAX_BYTES (`document_too_large`).",
            ),
        },
        summary="Upload a document; it is indexed in a worker (202), or the same bytes' document is returned (200)",
    )
    def post(self, request: Request) -> Response:
        upload = validated(s.UploadSerializer, request.data)
        document, created = services.document_upload(
            owner=request.user, filename=upload["file"].name, data=upload["file"].read(), title=upload["title"]
        )
        return Response(_documents(request.user, [document])[0], status=202 if created else 200)


class DocumentListView(APIView):
    # Declared so that the schema shows the page envelope the answer really has.
    pagination_class = PageNumberPagination

    @extend_schema(responses=s.DocumentSerializer(many=True), summary="The user's documents with their status")
    def get(self, request: Request) -> Response:
        paginator = self.pagination_class()
        page = paginator.paginate_queryset(selectors.document_list(owner=request.user), request, view=self)
        return paginator.get_paginated_response(_documents(request.user, page))


class DocumentDetailView(APIView):
    @extend_schema(responses=s.DocumentDetailSerializer, summary="A document with its L0 abstract and L1 overview")
    def get(self, request: Request, doc_id: str) -> Response:
        return Response(_detail(request.user, selectors.document_get(owner=request.user, doc_id=doc_id)))

    @extend_schema(
        request=s.RenameSerializer,
        responses={200: s.DocumentSerializer, **errors(bad_request="No title, an empty or overlong one, or a NUL.")},
        summary="Rename a document; it is not indexed again, and indexing keeps the name",
    )
    def patch(self, request: Request, doc_id: str) -> Response:
        document = selectors.document_get(owner=request.user, doc_id=doc_id)
        document = services.document_rename(document=document, **validated(s.RenameSerializer, request.data))
        return Response(s.DocumentSerializer(document).data)

    @extend_schema(responses={204: None}, summary="Delete a document with every node and vector")
    def delete(self, request: Request, doc_id: str) -> Response:
        services.document_delete(document=selectors.document_get(owner=request.user, doc_id=doc_id))
        return Response(status=204)


class ReindexView(APIView):
    @extend_schema(request=None, responses={202: s.DocumentSerializer}, summary="Index the document again")
    def post(self, request: Request, doc_id: str) -> Response:
        document = services.document_reindex(document=selectors.document_get(owner=request.user, doc_id=doc_id))
        return Response(s.DocumentSerializer(document).data, status=202)


_ENTRY = inline_serializer(
    "FsEntry",
    {
        "uri": serializers.CharField(),
        "kind": serializers.ChoiceField(choices=DocumentNode.Kind.values),
        "title": serializers.CharField(),
        "abstract": serializers.CharField(),
        "is_directory": serializers.BooleanField(),
        "position": serializers.IntegerField(allow_null=True),
        "status": serializers.ChoiceField(
            choices=Document.Status.values, required=False, help_text="Only for a document not yet indexed."
        ),
    },
    many=True,
)


class LsView(APIView):
    @extend_schema(
        parameters=[s.LsQuerySerializer],
        responses={
            200: inline_serializer(
                "FsLs", {"uri": serializers.CharField(), "total": serializers.IntegerField(), "children": _ENTRY}
            ),
            **errors(not_found="Nothing at that URI for this user."),
        },
        summary="The children of a viking:// URI with their L0 abstracts",
    )
    def get(self, request: Request) -> Response:
        # A plain dict, not the QueryDict: an empty parameter is then a value to validate, not an absent one.
        query = validated(s.LsQuerySerializer, request.query_params.dict())
        return Response(selectors.fs_ls(owner=request.user, **query))


class ReadView(APIView):
    @extend_schema(
        parameters=[s.ReadQuerySerializer],
        responses={
            200: inline_serializer(
                "FsRead",
                {
                    "uri": serializers.CharField(),
                    "level": serializers.ChoiceField(choices=LEVELS),
                    "kind": serializers.ChoiceField(choices=DocumentNode.Kind.values),
                    "title": serializers.CharField(),
                    "text": serializers.CharField(),
                },
            ),
            **errors(not_found="Nothing at that URI for this user."),
        },
        summary="The text of a node at one tier: L0 abstract, L1 overview or L2 full text",
    )
    def get(self, request: Request) -> Response:
        query = validated(s.ReadQuerySerializer, request.query_params.dict())
        return Response(selectors.fs_read(owner=request.user, **query))
