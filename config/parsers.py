"""Request parsers for the API."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from config.exceptions import TooLargeError


def refuse_oversized(parser_context, *, limit: int, error: type[TooLargeError] = TooLargeError) -> None:
    """Refuses a request from its declared length, before its body is read, so one request cannot
    fill the server's memory (Django's own upload limits do not cover DRF's parsers)."""
    request = (parser_context or {}).get("request")
    length = int(request.META.get("CONTENT_LENGTH") or 0) if request is not None else 0
    if length > limit:
        raise error(f"The request body is {length} bytes; the limit is {limit}.", details={"limit_bytes": limit})


def _has_lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def check_storable(data: Any) -> None:
    """Refuses a lone UTF-16 surrogate anywhere in a parsed body: JSON's "\\ud800" escape decodes to
    half of a surrogate pair, which no UTF-8 text can hold, so such a key could be stored in a JSON
    column and then fail on every read. (NUL characters are refused field by field, by the serializers.)"""
    pending: list[tuple[Any, str]] = [(data, "")]
    while pending:
        value, path = pending.pop()
        if isinstance(value, dict):
            for key, item in value.items():
                where = f"{path}.{key}" if path else str(key)
                if isinstance(key, str) and _has_lone_surrogate(key):
                    _refuse(path or "the body")
                pending.append((item, where))
        elif isinstance(value, list):
            pending.extend((item, f"{path}[{index}]") for index, item in enumerate(value))
        elif isinstance(value, str) and _has_lone_surrogate(value):
            _refuse(path or "the body")


def _refuse(where: str) -> None:
    # The path is built from the client's own keys; a surrogate in it would break the error response.
    where = where.encode("utf-8", "replace").decode()
    raise ParseError(
        f"JSON parse error - {where} contains a lone UTF-16 surrogate (an unpaired \\uD800-\\uDFFF escape)."
    )


class BoundedJSONParser(JSONParser):
    """A JSON body of at most API_MAX_BODY_BYTES, nested at most as deep as Python can parse, whose
    every string is valid Unicode."""

    def parse(self, stream, media_type=None, parser_context=None):
        refuse_oversized(parser_context, limit=settings.API_MAX_BODY_BYTES)
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - the body is nested too deeply.") from None
        check_storable(data)
        return data
