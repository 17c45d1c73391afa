"""Websocket authentication: the browser's session cookie, or an API token for other clients (in an
``Authorization: Token <key>`` header, or ``?token=<key>`` for clients that cannot set headers)."""

from __future__ import annotations

from urllib.parse import parse_qs

from asgiref.sync import ThreadSensitiveContext
from channels.auth import AuthMiddlewareStack
from channels.db import DatabaseSyncToAsync
from channels.middleware import BaseMiddleware
from channels.security.websocket import WebsocketDenier

from accounts_app.credentials import KEY_GUESSES_THROTTLED, credential_for_guessed_key
from foundation.security import (
    same_origin,
    scope_client_address,
    token_guess_period,
)


def _credential_for_token_sync(key: str, address: str):
    return credential_for_guessed_key(key=key, address=address)


_credential_for_token = DatabaseSyncToAsync(_credential_for_token_sync)
# What the lookup answers for an address that sent too many wrong keys: no key of it is looked up.
THROTTLED = KEY_GUESSES_THROTTLED


class ThreadPerSocket:
    """Gives each websocket a thread of its own for its database work, as Django gives each HTTP
    request. Without it every socket's work (the token lookup of a handshake, preparing a turn) queues
    on the one thread Channels shares between all of them, and under load handshakes outlast the
    server's timeout. (Running that work on a shared pool instead is unsafe: Django's connection
    objects follow the async context, so threads of one socket would share a connection.)"""

    def __init__(self, application) -> None:
        self.application = application

    async def __call__(self, scope, receive, send):
        async with ThreadSensitiveContext():
            return await self.application(scope, receive, send)


def _token_of(scope) -> str:
    for name, value in scope.get("headers", []):
        if name == b"authorization":
            scheme, _, key = value.decode("latin-1").partition(" ")
            if scheme.lower() == "token" and key.strip():
                return key.strip()
    values = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("token")
    return values[0] if values else ""


class TokenAuthMiddleware(BaseMiddleware):
    async def __call__(self, scope, receive, send):
        key = _token_of(scope)
        if key and not getattr(scope.get("user"), "is_authenticated", False):
            found = await _credential_for_token(key, scope_client_address(scope))
            if found == THROTTLED:
                scope = {**scope, "auth_throttled": token_guess_period()}
            elif found is not None:
                # Signed in by a token, not by the browser's session: signing out of a browser ends
                # that browser's sockets, never an integration's; revoking the token ends this one.
                user, credential = found
                scope = {**scope, "user": user, "auth_by": "token", "credential": credential}
        return await super().__call__(scope, receive, send)


def auth_stack(inner):
    return AuthMiddlewareStack(TokenAuthMiddleware(inner))


class SameOriginValidator:
    """Only pages of this site may open a socket with the user's cookie: the Origin must be the very
    scheme, host and port the socket was opened on (the Host header), or one of CSRF_TRUSTED_ORIGINS,
    and its host must be in ALLOWED_HOSTS. A page on another port of localhost is another origin.
    A socket without an Origin header is let through: browsers always send one (so cross-site pages
    are still refused), and integrations authenticate by token. Settings are read per connection."""

    def __init__(self, application) -> None:
        self.application = application

    async def __call__(self, scope, receive, send):
        if scope["type"] == "websocket":
            origin = _header(scope, b"origin")
            if origin is not None and not same_origin(
                origin, host=_header(scope, b"host") or "", secure=scope.get("scheme") == "wss"
            ):
                return await WebsocketDenier()(scope, receive, send)
        return await self.application(scope, receive, send)


def _header(scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", []):
        if key == name:
            return value.decode("latin-1")
    return None


def origin_validator(inner):
    return ThreadPerSocket(SameOriginValidator(inner))
