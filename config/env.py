"""Typed readers for configuration that comes from environment variables.

Settings modules call these; application code reads ``django.conf.settings`` instead, at call time.
A variable may be spelled in upper case (``ENABLE_QUERY_REWRITING``) or, for the feature flags the
design documents name in lower case, exactly as they name it (``enable_query_rewriting``).
"""

from __future__ import annotations

import os

from django.core.exceptions import ImproperlyConfigured

_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def _raw(name: str) -> str | None:
    value = os.environ.get(name)
    if value is None:
        value = os.environ.get(name.lower())
    return value


def env_str(name: str, default: str = "") -> str:
    value = _raw(name)
    return default if value is None else value.strip()


def env_required(name: str) -> str:
    value = env_str(name)
    if not value:
        raise ImproperlyConfigured(f"The environment variable {name} must be set.")
    return value


def env_bool(name: str, default: bool) -> bool:
    value = _raw(name)
    if value is None:
        return default
    lowered = value.strip().lower()
    if lowered in _TRUE:
        return True
    if lowered in _FALSE:
        return False
    raise ImproperlyConfigured(f"{name}={value!r} is not a boolean (use true or false).")


def env_int(name: str, default: int, *, minimum: int | None = None) -> int:
    value = _raw(name)
    if value is None or not value.strip():
        return default
    try:
        number = int(value)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name}={value!r} is not an integer.") from exc
    if minimum is not None and number < minimum:
        raise ImproperlyConfigured(f"{name}={number} is below its minimum of {minimum}.")
    return number


def env_float(name: str, default: float, *, minimum: float | None = None) -> float:
    value = _raw(name)
    if value is None or not value.strip():
        return default
    try:
        number = float(value)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name}={value!r} is not a number.") from exc
    if minimum is not None and not number >= minimum:  # NaN is refused too
        raise ImproperlyConfigured(f"{name}={value} is below its minimum of {minimum:g}.")
    return number


def env_list(name: str, default: list[str]) -> list[str]:
    value = _raw(name)
    if value is None:
        return list(default)
    return [item.strip() for item in value.split(",") if item.strip()]


MIN_SECRET_KEY_LENGTH = 50
MIN_SECRET_KEY_CHARACTERS = 5


def check_secret_key(key: str) -> str:
    """A production secret key must be long and varied: it signs sessions and password resets."""
    if (
        len(key) < MIN_SECRET_KEY_LENGTH
        or len(set(key)) < MIN_SECRET_KEY_CHARACTERS
        or key.startswith(("django-insecure", "dev-only", "test-only"))
    ):
        raise ImproperlyConfigured(
            f"SECRET_KEY must be at least {MIN_SECRET_KEY_LENGTH} characters with at least "
            f"{MIN_SECRET_KEY_CHARACTERS} different ones; generate one with: "
            "python -c 'import secrets; print(secrets.token_urlsafe(50))'"
        )
    return key
