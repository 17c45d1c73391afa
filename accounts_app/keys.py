"""An invitation's key: made once, put in its link, and stored only as a digest."""

from __future__ import annotations

import hashlib
import secrets

KEY_BYTES = 32
PREFIX_CHARS = 8


def key_new() -> str:
    return secrets.token_urlsafe(KEY_BYTES)


def key_digest(key: str) -> str:
    return hashlib.sha256(key.encode()).hexdigest()
