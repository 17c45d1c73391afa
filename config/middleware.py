"""Request guards that run before any view: what the API refuses before reading, and the failures
raised outside a view's own error handling, answered in the API's error shape.

DRF maps the errors of its views (``foundation.api.exception_handler``); these cover what happens before
a view runs (an oversized or chunked body, a huge query string) and what escapes non-DRF views (the
database being down).
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.http import HttpRequest, HttpResponse, JsonResponse

from foundation.api import database_unavailable_body, error_body, request_stopped_body
from foundation.exceptions import RequestStoppedError, is_database_down, is_statement_cancelled

logger = logging.getLogger(__name__)

API_PREFIX = "/api/"
# Longer than any query string the API documents (a search term, a page number, a category); a
# client sending more is broken or probing, and gets a clear 414 instead of a dropped connection.
MAX_QUERY_STRING_BYTES = 8192
# Multipart uploads may carry a document of up to DOCUMENT_MAX_BYTES plus the form's own fields.
MULTIPART_OVERHEAD_BYTES = 1024 * 1024


def database_unavailable_response() -> JsonResponse:
    return JsonResponse(database_unavailable_body(), status=503, headers={"Retry-After": "5"})


def body_limit_for(content_type: str) -> int:
    """The largest body the API reads for this Content-Type: a document upload, or anything else."""
    if content_type.split(";")[0].strip().lower() == "multipart/form-data":
        return settings.DOCUMENT_MAX_BYTES + MULTIPART_OVERHEAD_BYTES
    return settings.API_MAX_BODY_BYTES


# An import upload (an export with its documents) has a limit of its own, IMPORT_MAX_BYTES.
IMPORT_PATH = "/api/import"


def body_limit(request: HttpRequest) -> int:
    if request.path == IMPORT_PATH and request.META.get("CONTENT_TYPE", "").lower().startswith("multipart/form-data"):
        return settings.IMPORT_MAX_BYTES + MULTIPART_OVERHEAD_BYTES
    return body_limit_for(request.META.get("CONTENT_TYPE", ""))


def _too_large(size: int, limit: int) -> JsonResponse:
    return JsonResponse(
        error_body(
            "too_large",
            f"The request body is {size} bytes; the limit is {limit}.",
            {"limit_bytes": limit},
        ),
        status=413,
    )


class ApiRequestGuard:
    """For /api/ requests: 414 for a huge query string, 413 for an over-limit body (declared or
    chunked), a chunked body made readable to the parsers, and 503 (JSON) while the database is down."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not request.path.startswith(API_PREFIX):
            return self.get_response(request)
        query = request.META.get("QUERY_STRING", "")
        if len(query) > MAX_QUERY_STRING_BYTES:
            return JsonResponse(
                error_body(
                    "uri_too_long",
                    f"The query string is {len(query)} bytes; the limit is {MAX_QUERY_STRING_BYTES}.",
                    {"limit_bytes": MAX_QUERY_STRING_BYTES},
                ),
                status=414,
            )
        limit = body_limit(request)
        try:
            declared = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return JsonResponse(error_body("invalid", "The Content-Length header is not a number."), status=400)
        if declared > limit:
            return _too_large(declared, limit)
        if not declared and "chunked" in request.META.get("HTTP_TRANSFER_ENCODING", "").lower():
            # A chunked body has no declared length, and DRF reads a body of unknown length as empty:
            # the server already holds the whole body, so its length becomes known here. ``_body`` and
            # ``_stream`` are Django's own (HttpRequest, as pinned: Django 5.2.19), with no public way to
            # replace a body already read; tests/config/test_protocols.py's
            # test_a_chunked_json_body_is_read_whole fails without them.
            body = request.read(limit + 1)
            if len(body) > limit:
                return _too_large(len(body), limit)
            request._body = body
            request._stream = _Replay(body)
            request.META["CONTENT_LENGTH"] = str(len(body))
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if isinstance(exception, RequestStoppedError) or is_statement_cancelled(exception):
            # A request past its time limit, or whose client left: it was stopped to free its connection.
            logger.warning("request stopped: %s %s: %s", request.method, request.path, exception)
            if request.path.startswith(API_PREFIX):
                body = (
                    error_body(exception.code, exception.message)
                    if isinstance(exception, RequestStoppedError)
                    else request_stopped_body()
                )
                return JsonResponse(body, status=503, headers={"Retry-After": "5"})
            return HttpResponse(
                "This page took too long and was stopped; retry in a few seconds.",
                status=503,
                content_type="text/plain; charset=utf-8",
                headers={"Retry-After": "5"},
            )
        if not request.path.startswith(API_PREFIX):
            if is_database_down(exception):
                logger.warning("database unavailable: %s", exception)
                return HttpResponse(
                    "Recollect cannot reach its database right now; retry in a few seconds.",
                    status=503,
                    content_type="text/plain; charset=utf-8",
                    headers={"Retry-After": "5"},
                )
            return None
        if is_database_down(exception):
            logger.warning("database unavailable: %s", exception)
            return database_unavailable_response()
        if isinstance(exception, RequestDataTooBig):
            return _too_large(int(request.META.get("CONTENT_LENGTH") or 0), body_limit(request))
        if isinstance(exception, TooManyFieldsSent):
            return JsonResponse(error_body("invalid", str(exception)), status=400)
        return None


class _Replay:
    """A read-once stream over bytes already read, for parsers that read the request as a stream."""

    def __init__(self, body: bytes) -> None:
        self._body = body
        self._position = 0

    def read(self, size: int = -1) -> bytes:
        end = len(self._body) if size is None or size < 0 else self._position + size
        chunk = self._body[self._position : end]
        self._position += len(chunk)
        return chunk

    def readline(self, size: int = -1) -> bytes:
        newline = self._body.find(b"\n", self._position)
        end = len(self._body) if newline < 0 else newline + 1
        if size is not None and size >= 0:
            end = min(end, self._position + size)
        return self.read(end - self._position)
