"""Errors retrieval raises; mapped to HTTP in config.api."""

from config.exceptions import InvalidInputError, UnavailableError


class QueryTooLong(InvalidInputError):
    code = "query_too_long"
    default_message = "The query is longer than the limit (QUERY_MAX_CHARS)."


class ChatMessageTooLong(InvalidInputError):
    code = "message_too_long"
    default_message = "The message is longer than the limit (CHAT_MESSAGE_MAX_CHARS)."


class GenerationFailed(UnavailableError):
    code = "generation_failed"
    default_message = "The model could not answer; your message was saved."


class ServerBusy(UnavailableError):
    code = "busy"
    default_message = "Too many answers are streaming on this server; retry in a moment."


class TokenLimitReached(InvalidInputError):
    code = "token_limit_reached"
    default_message = "You have as many API tokens as a person may hold; revoke one first."
