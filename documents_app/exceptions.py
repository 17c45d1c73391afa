"""Errors of documents; mapped to HTTP in config.api."""

from config.exceptions import InvalidInputError, NotFoundError, TooLargeError


class DocumentNotFound(NotFoundError):
    code = "document_not_found"
    default_message = "No such document."


class NodeNotFound(NotFoundError):
    code = "node_not_found"
    default_message = "Nothing at that URI."


class UnsupportedDocument(InvalidInputError):
    code = "unsupported_document"
    default_message = "The file is not a document this product can read."


class DocumentTooLarge(TooLargeError):
    code = "document_too_large"
    default_message = "The file is larger than the upload limit."


class InvalidUri(InvalidInputError):
    code = "invalid_uri"
    default_message = "Not a viking:// URI of your resources."
