"""Errors retrieval raises; mapped to HTTP in foundation.api."""

from foundation.exceptions import InvalidInputError


class QueryTooLong(InvalidInputError):
    code = "query_too_long"
    default_message = "The query is longer than the limit (QUERY_MAX_CHARS)."
