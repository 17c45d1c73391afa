"""Errors a chat turn raises; mapped to HTTP in foundation.api."""

from foundation.exceptions import InvalidInputError, UnavailableError


class ChatMessageTooLong(InvalidInputError):
    code = "message_too_long"
    default_message = "The message is longer than the limit (CHAT_MESSAGE_MAX_CHARS)."


class GenerationFailed(UnavailableError):
    code = "generation_failed"
    default_message = "The model could not answer; your message was saved."


class ServerBusy(UnavailableError):
    code = "busy"
    default_message = "Too many answers are streaming on this server; retry in a moment."
