"""Protections that are not any one view's business: the client's address behind proxies, throttling
of password and token guesses, and secrets kept out of debug pages (the production secret key's checks
are in ``config.env``, read before Django is set up)."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlparse

from django.conf import settings
from django.core.cache import cache
from django.core.exceptions import DisallowedHost, ImproperlyConfigured
from django.http import HttpRequest, HttpResponse
from django.http.request import split_domain_port, validate_host
from django.urls import reverse
from django.views.debug import SafeExceptionReporterFilter
from redis.exceptions import RedisError
from rest_framework.settings import api_settings
from rest_framework.throttling import ScopedRateThrottle, SimpleRateThrottle

logger = logging.getLogger(__name__)

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


def client_address(*, remote_addr: str, forwarded_for: str | None) -> str:
    """The client's address as the ``NUM_PROXIES`` trusted proxies in front report it.

    Each proxy appends the address it was reached from to ``X-Forwarded-For``, so with N proxies the Nth
    entry from the right is the client as the outermost proxy saw it; everything to its left is whatever
    the client chose to send. With 0 proxies the header is the client's own words and the connecting
    address is used (``daphne --proxy-headers`` would replace that with the header's leftmost entry, so
    that combination is refused at start: ``refuse_unsafe_proxy_headers``)."""
    proxies = api_settings.NUM_PROXIES or 0
    hops = [hop.strip() for hop in (forwarded_for or "").split(",") if hop.strip()]
    if proxies and hops:
        return hops[-min(proxies, len(hops))]
    return remote_addr or ""


def request_client_address(request) -> str:
    meta = request.META
    return client_address(remote_addr=meta.get("REMOTE_ADDR", ""), forwarded_for=meta.get("HTTP_X_FORWARDED_FOR"))


def scope_client_address(scope) -> str:
    """The same for a websocket's scope (its connecting address and its headers)."""
    forwarded = [value.decode("latin-1") for name, value in scope.get("headers", []) if name == b"x-forwarded-for"]
    client = scope.get("client") or ("",)
    return client_address(remote_addr=str(client[0] or ""), forwarded_for=",".join(forwarded) or None)


PROXY_HEADERS_OPTION = "--proxy-headers"


def same_origin(origin: str, *, host: str, secure: bool) -> bool:
    """Whether a browser page at ``origin`` may drive a connection made to ``host``: the Origin must be the
    very scheme, host and port the connection was made on (the Host header), or one of CSRF_TRUSTED_ORIGINS,
    and its host must be in ALLOWED_HOSTS. A page on another port of localhost is another origin, and a page
    served over plain HTTP may not drive a connection made over TLS (``secure``). Settings are read per call."""
    origin = origin.strip().lower()
    if origin in {trusted.lower() for trusted in settings.CSRF_TRUSTED_ORIGINS}:
        return True
    parsed = urlparse(origin)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        return False
    if secure and parsed.scheme != "https":
        return False
    allowed = list(settings.ALLOWED_HOSTS) or (["localhost", "127.0.0.1", "[::1]"] if settings.DEBUG else [])
    domain, _ = split_domain_port(parsed.netloc)
    return _with_default_port(parsed.netloc, parsed.scheme) == _with_default_port(
        host.lower(), parsed.scheme
    ) and validate_host(domain, allowed)


def _with_default_port(netloc: str, scheme: str) -> str:
    if netloc.endswith("]") or ":" not in netloc:
        return f"{netloc}:{443 if scheme == 'https' else 80}"
    return netloc


def refuse_unsafe_proxy_headers(argv: Sequence[str]) -> None:
    """Refuses to serve when Daphne takes the client's address from ``X-Forwarded-For`` (its
    ``--proxy-headers`` option) while ``NUM_PROXIES`` is 0: Daphne then trusts the header's leftmost
    entry, which any client writes, and the connecting address is lost, so no throttle could tell one
    client from another. Called as the ASGI application loads, in Daphne's own process."""
    if (api_settings.NUM_PROXIES or 0) == 0 and any(arg.startswith(PROXY_HEADERS_OPTION) for arg in argv):
        raise ImproperlyConfigured(
            f"Daphne was started with {PROXY_HEADERS_OPTION} but NUM_PROXIES is 0: every client could pick "
            "its own address by sending X-Forwarded-For and escape the sign-in throttle. Set NUM_PROXIES to "
            f"the number of proxies in front of Recollect that append to X-Forwarded-For (1 for one nginx or "
            f"Caddy), or drop {PROXY_HEADERS_OPTION} when clients connect to Daphne directly."
        )


class ClientAddressThrottle(ScopedRateThrottle):
    """DRF's scoped throttle, keyed on ``request_client_address``."""

    def get_ident(self, request) -> str:
        return request_client_address(request)


class LoginRateThrottle(SimpleRateThrottle):
    """Sign-in attempts per client address, at the same rate as the token endpoint (AUTH_THROTTLE_RATE)."""

    scope = "auth"

    def get_cache_key(self, request, view) -> str:
        return self.cache_format % {"scope": "login", "ident": request_client_address(request)}


class PasswordGuessThrottle(SimpleRateThrottle):
    """Password confirmations of a signed-in person (changing the password, signing out everywhere):
    per person, so that a stolen session cannot try old passwords any faster than a sign-in page."""

    scope = "auth"

    def get_cache_key(self, request, view) -> str:
        return self.cache_format % {"scope": "password", "ident": request.user.pk}


def throttled_response(throttle: SimpleRateThrottle, what: str) -> HttpResponse:
    wait = int(throttle.wait() or 60) + 1
    return HttpResponse(
        f"Too many {what}; try again in {wait} seconds.",
        status=429,
        content_type="text/plain; charset=utf-8",
        headers={"Retry-After": str(wait)},
    )


# The throttle rate (DEFAULT_THROTTLE_RATES) of wrong keys on the websocket: AUTH_THROTTLE_RATE, like sign-in.
TOKEN_GUESS_SCOPE = "ws_token"  # noqa: S105 (a throttle scope, not a secret)


def _token_guesses_key(address: str) -> str:
    return f"throttle_{TOKEN_GUESS_SCOPE}_{address}"


def token_guess_period() -> int:
    """How long, in seconds, wrong keys are counted (and an address that sent too many is refused)."""
    return _token_guess_limit()[1]


def _token_guess_limit() -> tuple[int, int]:
    # Read at each call, not once per process like DRF's throttles: it is a setting like any other.
    return LoginRateThrottle().parse_rate(api_settings.DEFAULT_THROTTLE_RATES[TOKEN_GUESS_SCOPE])


def token_guess_allowed(address: str) -> bool:
    """Whether a websocket from ``address`` may present a key now: once it has sent too many wrong ones
    in the period, no key from it is even looked up, right or wrong, until the period passes (as the
    sign-in pages refuse even the right password)."""
    try:
        return (cache.get(_token_guesses_key(address)) or 0) < _token_guess_limit()[0]
    except (RedisError, OSError) as exc:  # without Redis, keys are checked uncounted rather than refused
        logger.warning("token guesses cannot be counted: %s", exc)
        return True


def token_guess_failed(address: str) -> None:
    key = _token_guesses_key(address)
    try:
        cache.add(key, 0, timeout=token_guess_period())
        cache.incr(key)
    except (RedisError, OSError, ValueError) as exc:  # ValueError: the count expired between the two calls
        logger.warning("a token guess could not be counted: %s", exc)


class LoginThrottleMiddleware:
    """Throttles password posts to the sign-in pages (the site's and the admin's): a session made
    there also signs API requests, so guessing a password there must be as slow as at /api/auth/token."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method == "POST" and request.path in _login_paths():
            throttle = LoginRateThrottle()
            if not throttle.allow_request(request, None):
                return throttled_response(throttle, "sign-in attempts from this address")
        return self.get_response(request)


def _login_paths() -> set[str]:
    return {reverse(settings.LOGIN_URL), reverse("admin:login")}


# The policy of every HTML page. Scripts and styles come from this site's own files only: no inline
# script, no inline event handler, no style attribute, no eval, so markup that slipped into a page (a
# message, a document's title, a trace) can neither run nor restyle it. Images only from this site (or
# drawn inline): a message or a document quoting an image from another site must not make every
# reader's browser fetch it, which would tell that site who read what, when. No plugins, no <base> that
# re-points relative links, no framing by another site, and forms post to this site alone.
CONTENT_SECURITY_POLICY: dict[str, tuple[str, ...]] = {
    "default-src": ("'self'",),
    "script-src": ("'self'",),
    "style-src": ("'self'",),
    "img-src": ("'self'", "data:", "blob:"),
    "font-src": ("'self'",),
    "connect-src": ("'self'",),
    "worker-src": ("'self'",),
    "object-src": ("'none'",),
    "base-uri": ("'self'",),
    "frame-ancestors": ("'none'",),
    "form-action": ("'self'",),
}
# Where a page may widen the policy, by URL name, and why. The API reference (Redoc) injects its styles
# as <style> elements the moment its bundle loads, before any nonce could be handed to it, and starts the
# worker that builds its search index from a blob: URL: that page alone admits inline styles (never
# inline scripts) and blob: workers. It shows the API's schema and nothing a user wrote.
PAGE_POLICIES: dict[str, dict[str, tuple[str, ...]]] = {
    "redoc": {"style-src": ("'self'", "'unsafe-inline'"), "worker-src": ("'self'", "blob:")},
}


class ContentSecurityPolicyMiddleware:
    """Sets the policy above on every HTML page: the app's, the operators', the admin's and the API
    docs. A view that sets its own ``Content-Security-Policy`` keeps it.

    With ``DEBUG`` on, Django's own error pages (a traceback, an unrouted address), which need their
    inline style and script, are sent without it; the production settings never turn ``DEBUG`` on."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if not response.get("Content-Type", "").startswith("text/html") or _is_debug_page(request):
            return response
        response.headers.setdefault("Content-Security-Policy", content_security_policy(request))
        return response

    def process_exception(self, request: HttpRequest, exception: Exception) -> None:
        request.csp_failed = True  # the response is an error page, Django's own technical one under DEBUG


def content_security_policy(request: HttpRequest) -> str:
    """The policy of ``request``'s page: the site's, widened where PAGE_POLICIES says, and the websocket
    of the page's own origin named explicitly (older browsers do not count ws: and wss: as 'self')."""
    directives = dict(CONTENT_SECURITY_POLICY)
    match = getattr(request, "resolver_match", None)
    directives |= PAGE_POLICIES.get(match.url_name if match else "", {})
    socket = _websocket_origin(request)
    if socket:
        directives["connect-src"] = (*directives["connect-src"], socket)
    return "; ".join(f"{name} {' '.join(sources)}" for name, sources in directives.items())


def _websocket_origin(request: HttpRequest) -> str:
    try:
        host = request.get_host()
    except DisallowedHost:  # answered with a 400 already; the policy stays at 'self'
        return ""
    return f"{'wss' if request.is_secure() else 'ws'}://{host}"


def _is_debug_page(request: HttpRequest) -> bool:
    return settings.DEBUG and (
        getattr(request, "csp_failed", False) or getattr(request, "resolver_match", None) is None
    )
