"""Request parsers for the API."""

from __future__ import annotations

from django.conf import settings
from rest_framework.parsers import JSONParser

from config.exceptions import TooLargeError


class BoundedJSONParser(JSONParser):
    """Refuses a JSON body larger than API_MAX_BODY_BYTES before reading it (a 413), so one request
    cannot fill the server's memory; Django's own upload limit does not cover DRF's parsers."""

    def parse(self, stream, media_type=None, parser_context=None):
        request = (parser_context or {}).get("request")
        length = int(request.META.get("CONTENT_LENGTH") or 0) if request is not None else 0
        if length > settings.API_MAX_BODY_BYTES:
            raise TooLargeError(
                f"The request body is {length} bytes; the limit is {settings.API_MAX_BODY_BYTES}.",
                details={"limit_bytes": settings.API_MAX_BODY_BYTES},
            )
        return super().parse(stream, media_type, parser_context)
