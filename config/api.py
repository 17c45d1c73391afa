"""API plumbing shared by every app: the one exception-to-HTTP mapping, health, and API 404s.

Every error leaves the API as ``{"error": {"code", "message", "details"}}`` with a 4xx status
(5xx only for a dependency that is down or a genuine bug).
"""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, JsonResponse
from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import exceptions as drf_exceptions
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView
from rest_framework.views import exception_handler as drf_exception_handler

from config import health
from config.exceptions import (
    ConflictError,
    DomainError,
    InvalidInputError,
    NotFoundError,
    TooLargeError,
    UnavailableError,
)

_DOMAIN_STATUS: list[tuple[type[DomainError], int]] = [
    (NotFoundError, 404),
    (InvalidInputError, 400),
    (ConflictError, 409),
    (TooLargeError, 413),
    (UnavailableError, 503),
]


def error_body(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details or {}}}


def _first_message(detail: Any) -> str:
    if isinstance(detail, list) and detail:
        return _first_message(detail[0])
    if isinstance(detail, dict) and detail:
        field, value = next(iter(detail.items()))
        message = _first_message(value)
        return message if field in ("non_field_errors", "detail") else f"{field}: {message}"
    return str(detail)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, DomainError):
        status = next((code for kind, code in _DOMAIN_STATUS if isinstance(exc, kind)), 400)
        return Response(error_body(exc.code, exc.message, exc.details), status=status)
    if isinstance(exc, Http404):
        exc = drf_exceptions.NotFound()
    elif isinstance(exc, PermissionDenied):
        exc = drf_exceptions.PermissionDenied()
    response = drf_exception_handler(exc, context)
    if response is None or not isinstance(exc, drf_exceptions.APIException):
        return response
    if isinstance(exc, drf_exceptions.ValidationError):
        response.data = error_body("invalid", _first_message(exc.detail), {"fields": exc.detail})
    else:
        codes = exc.get_codes()
        code = codes if isinstance(codes, str) else exc.default_code
        response.data = error_body(code, str(exc.detail))
    return response


def api_not_found(request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
    return JsonResponse(error_body("not_found", f"No API endpoint at {request.path}."), status=404)


class HealthView(APIView):
    """Liveness and readiness: the database with pgvector, Redis, and (``?deep=1``) Celery workers."""

    authentication_classes: list = []
    permission_classes = [AllowAny]

    @extend_schema(
        responses=inline_serializer(
            "Health",
            {
                "status": serializers.ChoiceField(choices=["ok", "degraded"]),
                "database": serializers.DictField(),
                "redis": serializers.DictField(),
                "workers": serializers.DictField(required=False),
            },
        )
    )
    def get(self, request: Request) -> Response:
        report = health.health_report(include_workers=request.query_params.get("deep") in ("1", "true"))
        return Response(report, status=200 if report["status"] == "ok" else 503)
