"""Errors of documents; mapped to HTTP in foundation.api."""

from foundation.exceptions import InvalidInputError, NotFoundError, TooLargeError, UnavailableError


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


class InvalidTitle(InvalidInputError):
    code = "invalid"
    default_message = "title: must have at least one visible character."


class InvalidUri(InvalidInputError):
    code = "invalid_uri"
    default_message = "Not a viking:// URI of your resources."


class StorageFull(UnavailableError):
    """The server's disk (or the database's) has no room left: nothing was stored, and the same upload
    may succeed once space is freed, hence 503 rather than a fault of the request."""

    code = "storage_full"
    default_message = "The server has no room to store the file; try again later."
