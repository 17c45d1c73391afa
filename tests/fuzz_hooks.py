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
    # Django refuses a form or multipart body past its limits (a field over DATA_UPLOAD_MAX_MEMORY_SIZE,
    # more than DATA_UPLOAD_MAX_NUMBER_FIELDS fields) with RequestDataTooBig or TooManyFieldsSent while DRF
    # parses it; they leave as Django's HTML "Bad Request (400)", not in the API's error shape (a 413).
    form_refused_by_django = (
        (case.media_type or "").startswith(("multipart/form-data", "application/x-www-form-urlencoded"))
        and response.status_code == 400
        and response.headers.get("content-type", [""])[0].startswith("text/html")
    )
    return not (twisted_empty_multipart or form_refused_by_django)
