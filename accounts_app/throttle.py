"""Joining and asking for an account are throttled per client address, like signing in: each try costs
a password hash, and the sign-up form is open to anyone."""

from __future__ import annotations

from django.conf import settings
from rest_framework.throttling import SimpleRateThrottle


class JoinRateThrottle(SimpleRateThrottle):
    scope = "join"

    def get_rate(self) -> str:
        return settings.JOIN_THROTTLE_RATE

    def get_cache_key(self, request, view) -> str:
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}
