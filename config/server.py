"""What Daphne's HTTP parser (Twisted) answers by itself, before Django sees a request.

Twisted drops a connection whose request line or a header is longer than 16 KB without a word,
answers other malformed requests with a bare "400 Bad Request", and reads a body of any size (to a
temporary file) before Django can refuse it. Clients get the API's error shape instead, in a
complete HTTP response: 414 for an overlong line, 400 for a malformed request, and 413 as soon as a
body declares, or grows to, more than the API accepts for its Content-Type.
"""

from __future__ import annotations

import json

from twisted.web import http

from config.middleware import body_limit_for
from foundation.api import error_body
from integrations_app.openai_wire import OPENAI_PREFIX, OpenAIError


def _refuse(channel, status: bytes, code: str, message: str, *, path: bytes = b"") -> None:
    # The OpenAI-compatible routes answer in OpenAI's error shape, which their clients read.
    shaped = OpenAIError(message, code=code).body() if path.startswith(OPENAI_PREFIX) else error_body(code, message)
    body = json.dumps(shaped).encode()
    head = (
        b"HTTP/1.1 " + status + b"\r\nContent-Type: application/json\r\n"
        b"Content-Length: " + str(len(body)).encode() + b"\r\nConnection: close\r\n\r\n"
    )
    channel.transport.write(head + body)
    channel.loseConnection()


def _line_too_long(channel, line: bytes) -> None:
    _refuse(
        channel,
        b"414 URI Too Long",
        "uri_too_long",
        f"The request line or a header is longer than {channel.MAX_LENGTH} bytes.",
    )


def _bad_request(channel) -> None:
    _refuse(channel, b"400 Bad Request", "bad_request", "The request is not valid HTTP.")


def _limit(request) -> int:
    content_type = request.requestHeaders.getRawHeaders(b"content-type", [b""])[0]
    return body_limit_for(content_type.decode("latin-1"))


def _too_large(request, size: int) -> None:
    request._refused = True
    limit = _limit(request)
    _refuse(
        request.channel,
        b"413 Content Too Large",
        "too_large",
        f"The request body is at least {size} bytes; the limit is {limit}.",
        # The request line's path, kept by the channel (the request's own ``uri`` is set once the body is in).
        path=getattr(request.channel, "_path", None) or b"",
    )


_all_headers_received = http.HTTPChannel.allHeadersReceived
_handle_content_chunk = http.Request.handleContentChunk


def _check_declared_length(channel) -> None:
    if channel.length is not None and channel.length > _limit(channel.requests[-1]):
        _too_large(channel.requests[-1], channel.length)
        return
    _all_headers_received(channel)


def _count_body(request, data: bytes) -> None:
    if getattr(request, "_refused", False):
        return
    request._received = getattr(request, "_received", 0) + len(data)
    if request._received > _limit(request):  # a chunked body has no declared length to check first
        _too_large(request, request._received)
        return
    _handle_content_chunk(request, data)


# Patches of Twisted's HTTP server (twisted.web.http, as pinned: Twisted 26.10.0 under Daphne 4.2.3), which
# has no setting for any of this; each is still needed, as the test named beside it fails without it
# (tests/config/test_protocols.py, through a real Daphne):
_PATCHES = (
    # A request line or header over MAX_LENGTH: Twisted drops the connection with no response at all.
    # -> test_oversized_and_malformed_requests_get_the_error_shape_over_the_wire (414)
    (http.HTTPChannel, "lineLengthExceeded", _line_too_long),
    # Malformed HTTP: Twisted answers a bare "400 Bad Request" with no body.
    # -> test_a_malformed_request_gets_the_error_shape_not_a_bare_400
    (http.HTTPChannel, "_respondToBadRequestAndDisconnect", _bad_request),
    # A declared Content-Length over the limit: Twisted reads the whole body (to a temporary file) first.
    # -> test_oversized_and_malformed_requests_get_the_error_shape_over_the_wire (413)
    (http.HTTPChannel, "allHeadersReceived", _check_declared_length),
    # A chunked body, which declares no length, growing past the limit: the same, chunk by chunk.
    # -> test_a_chunked_body_is_refused_as_soon_as_it_grows_past_the_limit
    (http.Request, "handleContentChunk", _count_body),
)


def install() -> None:
    """Called once by the ASGI entry point, in the server process. A Twisted that no longer has one of
    the patched methods stops the server here, rather than leaving its protection silently off."""
    for owner, name, replacement in _PATCHES:
        if not callable(getattr(owner, name, None)):
            raise RuntimeError(f"twisted.web.http.{owner.__name__}.{name} is gone; review config.server")
        setattr(owner, name, replacement)
