"""Errors retrieval raises; mapped to HTTP in config.api."""

from config.exceptions import InvalidInputError


class InvalidTargetUri(InvalidInputError):
    code = "invalid_target_uri"
    default_message = "target_uri must be a viking:// URI under your own resources."


class QueryTooLong(InvalidInputError):
    code = "query_too_long"
    default_message = "The query is longer than the limit (QUERY_MAX_CHARS)."
