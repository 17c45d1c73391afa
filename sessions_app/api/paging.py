"""Cursor pages of a session's messages and archives.

A cursor is opaque to clients: it says where a page starts (after a message, reading on) or ends (before
a message, reading back), so a page costs the same at the end of a long conversation as at its start, and
messages recorded while a client pages through never shift what it has yet to read."""

from __future__ import annotations

import base64
import binascii
from typing import Any

from drf_spectacular.utils import OpenApiParameter
from rest_framework import serializers

from sessions_app.selectors import PAGE_MAX_BYTES, Page

# How many messages or archives a page holds unless ``limit`` says otherwise, and the most it may ask for.
PAGE_DEFAULT_SIZE = 50
PAGE_MAX_SIZE = 200
# A page also stops before passing this many bytes of text and metadata (it always holds one row).
PAGE_BYTES = PAGE_MAX_BYTES

_BEFORE, _AFTER = "before", "after"
_CURSOR_MAX_CHARS = 64


def cursor_encode(direction: str, key: int) -> str:
    return base64.urlsafe_b64encode(f"{direction}:{key}".encode()).decode().rstrip("=")


def page_cursors(page: Page) -> dict[str, str | None]:
    """The cursors of the pages around ``page``: ``previous`` (earlier rows) and ``next`` (later rows)."""
    return {
        "previous": cursor_encode(_BEFORE, page.earlier_before) if page.earlier_before is not None else None,
        "next": cursor_encode(_AFTER, page.later_after) if page.later_after is not None else None,
    }


class CursorField(serializers.CharField):
    """A cursor as given by an earlier page; decoded to ``{"before": key}`` or ``{"after": key}``."""

    def to_internal_value(self, data) -> dict[str, int]:
        text = super().to_internal_value(data)
        try:
            direction, _, key = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4)).decode("ascii").partition(":")
            value = int(key)
        except (binascii.Error, UnicodeDecodeError, ValueError) as exc:
            raise serializers.ValidationError("is not a cursor this API gave.") from exc
        if direction not in (_BEFORE, _AFTER) or value < 0:
            raise serializers.ValidationError("is not a cursor this API gave.")
        return {direction: value}


class PageQuerySerializer(serializers.Serializer):
    cursor = CursorField(
        required=False,
        max_length=_CURSOR_MAX_CHARS,
        help_text="The `previous` or `next` of an earlier page; absent: the first page (the oldest).",
    )
    limit = serializers.IntegerField(
        required=False,
        default=PAGE_DEFAULT_SIZE,
        min_value=1,
        max_value=PAGE_MAX_SIZE,
        help_text=f"Rows per page (default {PAGE_DEFAULT_SIZE}, at most {PAGE_MAX_SIZE}); a page also stops "
        f"before {PAGE_BYTES // (1024 * 1024)} MB of text and metadata, always holding at least one row.",
    )


def page_bounds(query: dict[str, Any]) -> dict[str, int | None]:
    """The selector's arguments for a validated ``PageQuerySerializer``: no cursor reads from the oldest."""
    cursor = query.get("cursor") or {_AFTER: -1}
    return {"limit": query["limit"], "before": cursor.get(_BEFORE), "after": cursor.get(_AFTER)}


PAGE_PARAMETERS = [
    OpenApiParameter("cursor", str, description=PageQuerySerializer().fields["cursor"].help_text),
    OpenApiParameter("limit", int, description=PageQuerySerializer().fields["limit"].help_text),
]
