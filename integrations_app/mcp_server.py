"""The MCP server at ``/mcp``: streamable HTTP, stateless, served by Daphne beside Django.

What happens to a request, in order:

1. The Host must be one of ``ALLOWED_HOSTS`` (Django's own check), and an ``Origin``, when a browser sends
   one, must be this site's (``foundation.security.same_origin``, the websocket's rule): a page elsewhere
   cannot reach a server on the person's machine by DNS rebinding. Refused: 400 / 403.
2. An API key, as ``Authorization: Bearer <key>`` (or ``Token <key>``), names the person; without a good
   one the answer is 401 with ``WWW-Authenticate: Bearer resource_metadata=...``, pointing at the OAuth
   protected-resource metadata (RFC 9728) that tells a client a key is needed. There is no OAuth
   authorization server: keys are made on the Account page or with ``POST /api/auth/token``. Wrong keys
   count towards the same per-address limit as the websocket's.
3. The official ``mcp`` SDK answers: the current revision's self-contained requests (2026-07-28), and the
   ``initialize`` handshake of the 2024-11-05 to 2025-11-25 revisions, in stateless mode (no
   ``Mcp-Session-Id``: every request stands alone, so any Daphne process may answer it).

The SDK's Starlette app starts its session manager from an ASGI lifespan, which Daphne never sends. What
that lifespan starts is one anyio task group (plus the server's own lifespan, empty here) that hosts the
server task of each stateless request. So each request runs its own manager: ``run()`` opens a task group
for exactly that request's work and closes it when the answer is sent. Nothing outlives a request, and
nothing is bound to one event loop or process.
"""

from __future__ import annotations

import io
import json
from typing import Any

from asgiref.sync import ThreadSensitiveContext, sync_to_async
from django.core.exceptions import DisallowedHost
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpRequest, JsonResponse
from django.urls import reverse
from django.views import View
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp_types import INVALID_REQUEST

from accounts_app.credentials import KEY_GUESSES_THROTTLED, credential_for_guessed_key
from foundation.security import (
    same_origin,
    scope_client_address,
    token_guess_period,
)
from integrations_app.mcp_tools import CALLER, mcp_server_build

MCP_PATH = "/mcp"
RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource"
# Where people make API keys: the metadata points clients (and their users) there.
ACCOUNT_PAGE = "account-page"
KEY_SCHEMES = ("bearer", "token")
# A wrong key, or too many of them: told apart in WWW-Authenticate as RFC 6750 asks.
NO_KEY, BAD_KEY, THROTTLED = "", "invalid_token", "throttled"

SERVER = mcp_server_build()


def resource_metadata_url(request: HttpRequest) -> str:
    return request.build_absolute_uri(RESOURCE_METADATA_PATH + MCP_PATH)


class ProtectedResourceMetadataView(View):
    """The OAuth protected-resource metadata (RFC 9728) of ``/mcp``, at the well-known path and at its
    ``/mcp``-suffixed variant. It names no authorization server, since there is none: the resource takes
    the product's API keys as bearer tokens, made on the page ``resource_documentation`` names."""

    http_method_names = ["get"]

    def get(self, request: HttpRequest) -> JsonResponse:
        return JsonResponse(
            {
                "resource": request.build_absolute_uri(MCP_PATH),
                "resource_name": "Recollect MCP server",
                "bearer_methods_supported": ["header"],
                "scopes_supported": [],
                "resource_documentation": request.build_absolute_uri(reverse(ACCOUNT_PAGE)),
            }
        )


def _refusal(status: int, message: str, headers: dict[str, str] | None = None) -> tuple[int, bytes, dict]:
    """A JSON-RPC error without a request id, as the SDK answers transport-level refusals."""
    body = {"jsonrpc": "2.0", "id": None, "error": {"code": INVALID_REQUEST, "message": message}}
    return status, json.dumps(body).encode(), headers or {}


async def _send(send, status: int, body: bytes, headers: dict[str, str]) -> None:
    raw = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    raw += [(name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers.items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body})


def _header(scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin-1")
    return None


def _key_of(scope) -> str:
    scheme, _, key = (_header(scope, b"authorization") or "").strip().partition(" ")
    return key.strip() if scheme.lower() in KEY_SCHEMES else ""


def _signed_in(key: str, address: str):
    """The user a key signs in, or why not (``BAD_KEY``, ``THROTTLED``)."""
    found = credential_for_guessed_key(key=key, address=address)
    if found == KEY_GUESSES_THROTTLED:
        return THROTTLED
    return BAD_KEY if found is None else found[0]


def _unauthorized(request: HttpRequest, reason: str) -> tuple[int, bytes, dict]:
    challenge = f'Bearer resource_metadata="{resource_metadata_url(request)}"'
    if reason == BAD_KEY:
        challenge += ', error="invalid_token", error_description="The API key is not valid (revoked or expired?)"'
        return _refusal(
            401, "The API key is not valid: it may have been revoked or have expired.", {"WWW-Authenticate": challenge}
        )
    if reason == THROTTLED:
        return _refusal(
            429,
            "Too many wrong API keys from this address; wait and try again.",
            {"Retry-After": str(token_guess_period())},
        )
    return _refusal(
        401,
        "An API key is needed: send `Authorization: Bearer <key>` (keys are made on the Account page).",
        {"WWW-Authenticate": challenge},
    )


async def _admit(scope) -> tuple[Any, tuple[int, bytes, dict] | None]:
    """``(user, None)`` for a request that may go on, else ``(None, refusal)``."""
    request = ASGIRequest(scope, io.BytesIO())
    try:
        host = request.get_host()
    except DisallowedHost:
        return None, _refusal(400, "Invalid Host header.")
    origin = _header(scope, b"origin")
    if origin is not None and not same_origin(origin, host=host, secure=request.is_secure()):
        return None, _refusal(403, "Requests from pages of another origin are refused (Origin header).")
    key = _key_of(scope)
    found = await sync_to_async(_signed_in, thread_sensitive=True)(key, scope_client_address(scope)) if key else NO_KEY
    if isinstance(found, str):
        return None, _unauthorized(request, found)
    return found, None


async def serve_mcp(scope, receive, send) -> None:
    async with ThreadSensitiveContext():
        user, refusal = await _admit(scope)
        if refusal is not None:
            await _send(send, *refusal)
            return
        token = CALLER.set(user)
        try:
            manager = StreamableHTTPSessionManager(app=SERVER._lowlevel_server, stateless=True, json_response=True)
            async with manager.run():
                await manager.handle_request(scope, receive, send)
        finally:
            CALLER.reset(token)


class WithMcp:
    """HTTP for ``/mcp`` to the MCP server; everything else to ``application`` (Django)."""

    def __init__(self, application) -> None:
        self.application = application

    async def __call__(self, scope, receive, send):
        if scope["type"] == "http" and scope["path"].rstrip("/") == MCP_PATH:
            return await serve_mcp(scope, receive, send)
        return await self.application(scope, receive, send)
