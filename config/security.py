"""Protections that are not any one view's business: login throttling and secrets kept out of debug
pages (the production secret key's checks are in ``config.env``, read before Django is set up)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.urls import reverse
from django.views.debug import SafeExceptionReporterFilter
from rest_framework.throttling import SimpleRateThrottle

# A URL's password: "redis://:secret@host" or "postgresql://user:secret@host".
_URL_PASSWORD = re.compile(r"(?P<head>[a-zA-Z][a-zA-Z0-9+.-]*://[^:/@\s]*:)(?P<password>[^@\s]+)(?P<tail>@)")
MASK = "********************"


def mask_url_passwords(text: str) -> str:
    return _URL_PASSWORD.sub(lambda m: f"{m['head']}{MASK}{m['tail']}", text)


class _Masked:
    """An object shown on a debug page by its representation, with any URL password masked."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return self.text


def _masked(value: Any) -> Any:
    if isinstance(value, str):
        return mask_url_passwords(value)
    if isinstance(value, dict):
        return {key: _masked(item) for key, item in value.items()}
    if type(value) in (list, tuple):
        # Plain lists and tuples only: a subclass (a form's error list, a named tuple) may not be built
        # from an iterable, and breaking the debug page would hide the very error it is about.
        return type(value)(_masked(item) for item in value)
    try:
        text = repr(value)
    except Exception:  # a local whose repr fails is shown as Django would show it
        return value
    masked = mask_url_passwords(text)
    return value if masked == text else _Masked(masked)


class SecretsFilter(SafeExceptionReporterFilter):
    """Django's filter hides settings named like secrets; Redis and database URLs carry their
    password inside the value (REDIS_URL, CACHES, CELERY_BROKER_URL, CHANNEL_LAYERS), request
    headers carry API tokens, and a traceback's local variables may hold either. All are masked on
    debug pages and in error reports, and so are local variables named like secrets."""

    hidden_settings = re.compile("API|TOKEN|KEY|SECRET|PASS|SIGNATURE|AUTH|CREDENTIAL|HTTP_COOKIE", flags=re.I)

    def cleanse_setting(self, key, value):
        return _masked(super().cleanse_setting(key, value))

    def get_traceback_frame_variables(self, request, tb_frame):
        return [
            (name, self.cleansed_substitute if self.hidden_settings.search(name) else _masked(value))
            for name, value in super().get_traceback_frame_variables(request, tb_frame)
        ]


class LoginRateThrottle(SimpleRateThrottle):
    """Sign-in attempts per client address, at the same rate as the token endpoint (AUTH_THROTTLE_RATE)."""

    scope = "auth"

    def get_cache_key(self, request, view) -> str:
        return self.cache_format % {"scope": "login", "ident": self.get_ident(request)}


class LoginThrottleMiddleware:
    """Throttles password posts to the sign-in pages (the site's and the admin's): a session made
    there also signs API requests, so guessing a password there must be as slow as at /api/auth/token."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method == "POST" and request.path in _login_paths():
            throttle = LoginRateThrottle()
            if not throttle.allow_request(request, None):
                wait = int(throttle.wait() or 60) + 1
                return HttpResponse(
                    f"Too many sign-in attempts from this address; try again in {wait} seconds.",
                    status=429,
                    content_type="text/plain; charset=utf-8",
                    headers={"Retry-After": str(wait)},
                )
        return self.get_response(request)


def _login_paths() -> set[str]:
    return {reverse(settings.LOGIN_URL), reverse("admin:login")}


# Images only from this site (or drawn inline): a message or a document quoting an image from another
# site must not make every reader's browser fetch it, which would tell that site who read what, when.
CONTENT_SECURITY_POLICY = "img-src 'self' data: blob:"


class ContentSecurityPolicyMiddleware:
    """Sets the policy above on every page (the app's, the admin's, the API docs)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if response.get("Content-Type", "").startswith("text/html"):
            response.headers.setdefault("Content-Security-Policy", CONTENT_SECURITY_POLICY)
        return response
