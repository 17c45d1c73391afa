"""Websocket authentication: the browser's session cookie, or a DRF token for other clients (in an
``Authorization: Token <key>`` header, or ``?token=<key>`` for clients that cannot set headers)."""

from __future__ import annotations

from urllib.parse import parse_qs

from channels.auth import AuthMiddlewareStack
from channels.db import database_sync_to_async
from channels.middleware import BaseMiddleware
from channels.security.websocket import OriginValidator


@database_sync_to_async
def _user_for_token(key: str):
    from rest_framework.authtoken.models import Token

    token = Token.objects.select_related("user").filter(key=key).first()
    return token.user if token and token.user.is_active else None


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
            user = await _user_for_token(key[:64])
            if user is not None:
                scope = {**scope, "user": user}
        return await super().__call__(scope, receive, send)


def auth_stack(inner):
    return AuthMiddlewareStack(TokenAuthMiddleware(inner))


class _OriginValidator(OriginValidator):
    """Only pages served from ALLOWED_HOSTS may open a socket with the user's cookie. A socket without an
    Origin header is let through: browsers always send one (so cross-site pages are still refused),
    and integrations authenticate by token. The hosts are read per connection, not at import."""

    def __init__(self, application) -> None:
        super().__init__(application, [])

    def valid_origin(self, parsed_origin) -> bool:
        from django.conf import settings

        allowed = list(settings.ALLOWED_HOSTS) or (["localhost", "127.0.0.1", "[::1]"] if settings.DEBUG else [])
        self.allowed_origins = allowed
        return parsed_origin is None or super().valid_origin(parsed_origin)


def origin_validator(inner):
    return _OriginValidator(inner)
