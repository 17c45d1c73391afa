"""Errors of documents; mapped to HTTP in config.api."""

from config.exceptions import NotFoundError


class DocumentNotFound(NotFoundError):
    code = "document_not_found"
    default_message = "No such document."
