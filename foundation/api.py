"""API plumbing shared by every app: the one exception-to-HTTP mapping, health, and API 404s.

Every error leaves the API as ``{"error": {"code", "message", "details"}}`` with a 4xx status
(5xx only for a dependency that is down or a genuine bug).
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from django.core.exceptions import PermissionDenied
from django.db import DataError, IntegrityError
from django.http import Http404, HttpRequest, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from django.views.defaults import server_error as html_server_error
from drf_spectacular.utils import extend_schema, inline_serializer
from redis.exceptions import RedisError
from rest_framework import exceptions as drf_exceptions
from rest_framework import serializers
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import SimpleRateThrottle
from rest_framework.views import APIView
from rest_framework.views import exception_handler as drf_exception_handler

from foundation import health
from foundation.connections import release_database_connections
from foundation.exceptions import (
    DATABASE_DOWN_MESSAGE,
    ConflictError,
    DomainError,
    InvalidInputError,
    NotFoundError,
    RequestStoppedError,
    TooLargeError,
    UnavailableError,
    is_database_down,
    is_statement_cancelled,
)
from foundation.parsers import JSON_VALUE_MAX_DEPTH, json_problem, readable_path, text_problem
from foundation.security import request_client_address

logger = logging.getLogger(__name__)

_DOMAIN_STATUS: list[tuple[type[DomainError], int]] = [
    (NotFoundError, 404),
    (InvalidInputError, 400),
    (ConflictError, 409),
    (TooLargeError, 413),
    (UnavailableError, 503),
    (RequestStoppedError, 503),
]


def error_body(code: str, message: str, details: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, "details": details or {}}}


def database_unavailable_body() -> dict[str, Any]:
    return error_body("unavailable", DATABASE_DOWN_MESSAGE)


def _first_message(detail: Any) -> str:
    if isinstance(detail, list) and detail:
        return _first_message(detail[0])
    if isinstance(detail, dict) and detail:
        field, value = next(iter(detail.items()))
        message = _first_message(value)
        return message if field in ("non_field_errors", "detail") else f"{field}: {message}"
    return str(detail)


def request_stopped_body() -> dict[str, Any]:
    return error_body(RequestStoppedError.code, RequestStoppedError.default_message)


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    if isinstance(exc, RequestStoppedError) or is_statement_cancelled(exc):
        logger.warning("request stopped: %s: %s", getattr(context.get("request"), "path", "?"), exc)
    if isinstance(exc, DomainError):
        status = next((code for kind, code in _DOMAIN_STATUS if isinstance(exc, kind)), 400)
        headers = {"Retry-After": "5"} if status == 503 else None
        return Response(error_body(exc.code, exc.message, exc.details), status=status, headers=headers)
    if is_statement_cancelled(exc):
        return Response(request_stopped_body(), status=503, headers={"Retry-After": "5"})
    if is_database_down(exc):
        return Response(database_unavailable_body(), status=503, headers={"Retry-After": "5"})
    if isinstance(exc, RedisError):
        # Only what truly needs Redis gets here (the token endpoint's throttle, say); the rest works without it.
        body = error_body("unavailable", "A required service (Redis) is unavailable; retry in a few seconds.")
        return Response(body, status=503, headers={"Retry-After": "5"})
    if isinstance(exc, DataError):
        # A value PostgreSQL cannot store (validation should have caught it; this keeps it a 4xx).
        return Response(error_body("invalid", "A value in the request cannot be stored."), 400)
    if isinstance(exc, IntegrityError):
        # Two writes raced for the same unique slot (a key, a sequence number); retrying may succeed.
        return Response(error_body("conflict", "The request conflicted with a concurrent change; retry it."), 409)
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


def validated(serializer_class, data) -> dict:
    """The validated data of ``data``, or the API's 400 with every field's problem."""
    serializer = serializer_class(data=data)
    serializer.is_valid(raise_exception=True)
    return serializer.validated_data


def storable_text(value: str) -> str:
    """A field validator: refuses a text that cannot be stored (a NUL character, a lone surrogate), so
    that it is a 400 naming the field instead of a failed insert, or a value kept where it is not
    checked (Redis) that fails every later read."""
    problem = text_problem(value)
    if problem:
        raise serializers.ValidationError(f"{problem}.")
    return value


# The name this validator had when it refused NUL alone; the apps' serializers use both.
reject_nul = storable_text


def storable_json(value: Any, *, max_bytes: int, max_depth: int = JSON_VALUE_MAX_DEPTH) -> Any:
    """Refuses a JSON value to be kept (metadata) that nests deeper than ``max_depth``, whose encoding
    is over ``max_bytes``, or with a key or string that cannot be stored; the error names the place."""
    found = json_problem(value, max_depth=max_depth)
    if found is not None:
        path, problem = found
        where = f"{readable_path(path)} " if path else ""
        raise serializers.ValidationError(f"{where}{problem}.")
    size = len(json.dumps(value, ensure_ascii=False).encode("utf-8"))
    if size > max_bytes:
        raise serializers.ValidationError(f"is {size} bytes as JSON; the limit is {max_bytes}.")
    return value


@csrf_exempt  # a POST to an unknown path is a 404, not a CSRF failure page: nothing here acts on it
def api_not_found(request: HttpRequest, *args: Any, **kwargs: Any) -> JsonResponse:
    return JsonResponse(error_body("not_found", f"No API endpoint at {request.path}."), status=404)


def server_error(request: HttpRequest, *args: Any, **kwargs: Any):
    """Django's 500 handler: the API's error shape under /api/, the usual page elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse(error_body("server_error", "An unexpected error occurred; it has been logged."), status=500)
    return html_server_error(request, *args, **kwargs)


DEEP_VALUES = ("1", "true")


def _is_staff(request: Request) -> bool:
    return bool(request.user and request.user.is_staff)


class DeepHealthThrottle(SimpleRateThrottle):
    """Deep checks by anyone but staff, per client address (HEALTH_THROTTLE_RATE), counted atomically in
    Redis per window, so that a burst of simultaneous checks is counted whole. A Redis that is down does
    not stop the check that reports it."""

    scope = "health"

    def allow_request(self, request: Request, view) -> bool:
        if self.rate is None or request.query_params.get("deep") not in DEEP_VALUES or _is_staff(request):
            return True
        now = time.time()
        key = self.cache_format % {
            "scope": self.scope,
            "ident": f"{self.get_ident(request)}:{int(now // self.duration)}",
        }
        try:
            self.cache.add(key, 0, timeout=self.duration * 2)
            count = self.cache.incr(key)
        except (RedisError, ValueError):
            return True
        self.wait_s = self.duration - now % self.duration
        return count <= self.num_requests

    def get_ident(self, request: Request) -> str:
        return request_client_address(request)

    def get_cache_key(self, request: Request, view) -> str | None:
        return None  # allow_request counts by itself

    def wait(self) -> float | None:
        return getattr(self, "wait_s", None)


class HealthView(APIView):
    """Liveness and readiness: the database with pgvector, whether this process can get a database
    connection, Redis, and (``?deep=1``) the Celery workers and their queues: every queue must have a
    worker consuming it; its backlog and the oldest waiting task's age are reported, and ``problems``
    says in words what is wrong.

    Anyone may ask whether the service is healthy; versions and error texts are for staff only. Staff get
    the workers asked there and then; anyone else gets them as asked a few seconds ago (HEALTH_DEEP_CACHE_S),
    at most HEALTH_THROTTLE_RATE times. The checks use connections of their own (``foundation.health``) and
    hold none of the pool people's requests share, not even while the workers are asked.
    """

    permission_classes = [AllowAny]
    throttle_classes = [DeepHealthThrottle]

    @extend_schema(
        responses=inline_serializer(
            "Health",
            {
                "status": serializers.ChoiceField(choices=["ok", "degraded"]),
                "database": serializers.DictField(),
                "connections": serializers.DictField(),
                "redis": serializers.DictField(),
                "warm": serializers.DictField(),
                "workers": serializers.DictField(required=False),
                "queues": serializers.DictField(required=False),
                "problems": serializers.ListField(child=serializers.CharField(), required=False),
            },
        )
    )
    def get(self, request: Request) -> Response:
        staff = _is_staff(request)
        # Telling who asks may have taken a connection (a token, a session); the checks need none.
        release_database_connections()
        report = health.health_report(include_workers=request.query_params.get("deep") in DEEP_VALUES, fresh=staff)
        status = 200 if report["status"] == "ok" else 503
        if not staff:
            # Others learn what works, not how it is set up (versions, worker names, backlogs).
            report = {
                name: {"ok": part["ok"]} if isinstance(part, dict) else part
                for name, part in report.items()
                if name != "problems"
            }
        return Response(report, status=status)
