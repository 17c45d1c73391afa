"""Request parsers for the API."""

from __future__ import annotations

from django.conf import settings
from rest_framework.parsers import JSONParser

from config.exceptions import TooLargeError


def refuse_oversized(parser_context, *, limit: int, error: type[TooLargeError] = TooLargeError) -> None:
    """Refuses a request from its declared length, before its body is read, so one request cannot
    fill the server's memory (Django's own upload limits do not cover DRF's parsers)."""
    request = (parser_context or {}).get("request")
    length = int(request.META.get("CONTENT_LENGTH") or 0) if request is not None else 0
    if length > limit:
        raise error(f"The request body is {length} bytes; the limit is {limit}.", details={"limit_bytes": limit})


class BoundedJSONParser(JSONParser):
    """A JSON body of at most API_MAX_BODY_BYTES."""

    def parse(self, stream, media_type=None, parser_context=None):
        refuse_oversized(parser_context, limit=settings.API_MAX_BODY_BYTES)
        return super().parse(stream, media_type, parser_context)
