"""Documents are read only by their owner."""

import pytest

from documents_app.exceptions import DocumentNotFound
from documents_app.selectors import document_get, document_list
from tests.factories import DocumentFactory, UserFactory

pytestmark = pytest.mark.django_db


def test_a_user_lists_only_their_own_documents():
    mine = DocumentFactory()
    DocumentFactory()
    assert list(document_list(owner=mine.owner)) == [mine]


def test_another_users_document_is_not_found():
    theirs = DocumentFactory()
    with pytest.raises(DocumentNotFound):
        document_get(owner=UserFactory(), doc_id=theirs.id)
    assert document_get(owner=theirs.owner, doc_id=theirs.id) == theirs


def test_document_uris_live_under_the_owners_resources():
    document = DocumentFactory()
    assert document.uri == f"viking://resources/users/{document.owner_id}/documents/{document.id}"
