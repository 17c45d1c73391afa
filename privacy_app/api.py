"""The API of a person's data as a whole (mounted under /api/ by config.urls).

Export and import: ``GET /api/export`` (``?format=okf`` for Markdown, ``?vectors=false`` without
vectors), ``POST /api/import`` (a multipart ``file``: an export zip or an OpenAI-format message list;
or that list as the JSON body), ``GET /api/import/{id}`` (its state and counts)."""

from __future__ import annotations

import io
import json
import tempfile

from django.conf import settings
from django.http import FileResponse
from django.urls import path
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import MultiPartParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from foundation.api import validated
from foundation.parsers import BoundedJSONParser, refuse_oversized
from foundation.schema import errors
from privacy_app import exports, imports, okf
from privacy_app.archive import ImportInvalid, ImportTooLarge
from privacy_app.models import ImportJob

# --- Export and import ------------------------------------------------------------------------------

FORMATS = ("recollect", "okf")
MULTIPART_OVERHEAD_BYTES = 64 * 1024


class ExportQuerySerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=FORMATS, default="recollect")
    vectors = serializers.BooleanField(default=True)


class _NoFormatOverride:
    URL_FORMAT_OVERRIDE = None


class ExportNegotiation(DefaultContentNegotiation):
    """``?format=`` names the export's format here, not a renderer of the answer (DRF's reading)."""

    settings = _NoFormatOverride()


class ExportView(APIView):
    content_negotiation_class = ExportNegotiation

    @extend_schema(
        parameters=[ExportQuerySerializer],
        responses={(200, "application/zip"): OpenApiTypes.BINARY, **errors(400)},
        summary="Everything you own as one zip (a Recollect export, or Markdown files in OKF)",
    )
    def get(self, request: Request) -> FileResponse:
        query = validated(ExportQuerySerializer, request.query_params.dict())
        # On disk, not in memory: the file is removed when the answer has been sent.
        target = tempfile.TemporaryFile(prefix="recollect-export-")  # noqa: SIM115 (FileResponse closes it)
        if query["format"] == "okf":
            okf.okf_write(owner=request.user, target=target)
            name = exports.export_filename(owner=request.user, suffix="-okf")
        else:
            exports.export_write(owner=request.user, target=target, vectors=query["vectors"])
            name = exports.export_filename(owner=request.user)
        target.seek(0)
        return FileResponse(target, as_attachment=True, filename=name, content_type="application/zip")


class ImportUploadParser(MultiPartParser):
    """An import upload of at most IMPORT_MAX_BYTES (plus room for the multipart envelope)."""

    def parse(self, stream, media_type=None, parser_context=None):
        refuse_oversized(
            parser_context, limit=settings.IMPORT_MAX_BYTES + MULTIPART_OVERHEAD_BYTES, error=ImportTooLarge
        )
        return super().parse(stream, media_type, parser_context)


class ImportStatusSerializer(serializers.Serializer):
    import_id = serializers.UUIDField()
    state = serializers.ChoiceField(choices=ImportJob.State.choices)
    kind = serializers.ChoiceField(choices=ImportJob.Kind.choices)
    filename = serializers.CharField()
    total = serializers.IntegerField()
    done = serializers.IntegerField()
    totals = serializers.DictField(child=serializers.IntegerField())
    counts = serializers.DictField(child=serializers.IntegerField())
    skipped = serializers.DictField(child=serializers.IntegerField())
    errors = serializers.ListField(child=serializers.DictField())
    created_at = serializers.DateTimeField()
    started_at = serializers.DateTimeField(allow_null=True)
    finished_at = serializers.DateTimeField(allow_null=True)


def _status_answer(job: ImportJob) -> dict:
    return ImportStatusSerializer(imports.import_status(job=job)).data


class ImportView(APIView):
    parser_classes = [ImportUploadParser, BoundedJSONParser]

    @extend_schema(
        request={
            "multipart/form-data": inline_serializer("ImportUpload", {"file": serializers.FileField()}),
            "application/json": OpenApiTypes.OBJECT,
        },
        responses={
            201: ImportStatusSerializer,
            202: ImportStatusSerializer,
            **errors(400, too_large="The upload is over IMPORT_MAX_BYTES (`import_too_large`)."),
        },
        summary="Import an export zip or an OpenAI-format message list (201 done; 202 running in a worker)",
    )
    def post(self, request: Request) -> Response:
        upload = request.FILES.get("file")
        if upload is not None:
            job = imports.import_create(owner=request.user, upload=upload, filename=upload.name, size=upload.size)
        elif request.content_type.startswith("application/json"):
            body = json.dumps(request.data).encode("utf-8")
            job = imports.import_create(
                owner=request.user, upload=io.BytesIO(body), filename="messages.json", size=len(body)
            )
        else:
            raise ImportInvalid("Send the file as the multipart field 'file', or a message list as the JSON body.")
        status = 201 if job.state in (ImportJob.State.DONE, ImportJob.State.FAILED) else 202
        return Response(_status_answer(job), status=status)


class ImportDetailView(APIView):
    @extend_schema(responses={200: ImportStatusSerializer, **errors(404)}, summary="An import's state and counts")
    def get(self, request: Request, import_id: str) -> Response:
        return Response(_status_answer(imports.import_get(owner=request.user, import_id=import_id)))


urlpatterns = [
    path("export", ExportView.as_view(), name="export"),
    path("import", ImportView.as_view(), name="import"),
    path("import/<str:import_id>", ImportDetailView.as_view(), name="import-detail"),
]
