"""Documents in the admin go through the same service as an upload: a refused file is the form's error
and leaves nothing behind, a second upload of the same bytes is the same document (never a 500), and
what indexing derived cannot be edited by hand."""

import importlib
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from documents_app.models import Document, DocumentNode
from retrieval_app.services import retrieval_find
from tests.factories import UserFactory
from tests.samples import KETTLE

pytestmark = pytest.mark.django_db(transaction=True)  # the upload's indexing runs once it commits


@pytest.fixture
def staff_client(client):
    client.force_login(UserFactory(is_staff=True, is_superuser=True))
    return client


def _add(client, owner, name: str, data: bytes, title: str = ""):
    upload = SimpleUploadedFile(name, data)
    return client.post(reverse("admin:documents_app_document_add"), {"owner": owner.pk, "title": title, "file": upload})


def test_adding_a_document_uploads_and_indexes_it_like_the_api(staff_client, settings):
    owner = UserFactory()
    form = staff_client.get(reverse("admin:documents_app_document_add")).content.decode()
    assert 'type="file"' in form and "Up to 50.0 MB" in form  # the limit and types are said first
    response = _add(staff_client, owner, "kettle.md", KETTLE, title="Kettle guide")
    document = Document.objects.get(owner=owner)
    assert response.status_code == 302 and response.url == reverse("admin:documents_app_document_changelist")
    assert document.uri.endswith(f"/documents/{document.id}") and document.title == "Kettle guide"
    assert document.status == "ready" and document.node_count > 0
    assert Path(document.file.path).read_bytes() == KETTLE
    hits = retrieval_find(owner=owner, query="how often should the kettle be descaled?").hits
    assert hits and all(hit.uri.startswith(document.uri + "/") or hit.uri == document.uri for hit in hits)


def test_a_second_add_of_the_same_bytes_is_the_same_document_not_an_error(staff_client):
    owner = UserFactory()
    _add(staff_client, owner, "kettle.md", KETTLE)
    again = _add(staff_client, owner, "kettle-copy.md", KETTLE)
    assert again.status_code == 302
    assert Document.objects.filter(owner=owner).count() == 1
    messages = [str(m) for m in again.wsgi_request._messages]
    assert any("uploaded before" in m for m in messages)


@pytest.mark.parametrize(
    ("name", "data", "says"),
    [
        ("tool.exe", b"MZ\x90\x00binary", "does not read"),
        ("empty.md", b"", "empty"),
        ("fake.pdf", b"just some text pretending", "its content is plain text"),
    ],
)
def test_a_refused_file_is_the_forms_error_and_leaves_nothing(staff_client, settings, name, data, says):
    owner = UserFactory()
    media = Path(settings.MEDIA_ROOT)
    before = {p for p in media.rglob("*") if p.is_file()}
    response = _add(staff_client, owner, name, data)
    assert response.status_code == 200  # the form again, with its error
    errors = " ".join(str(e) for e in response.context["adminform"].form.non_field_errors())
    errors += " ".join(str(e) for e in response.context["adminform"].form.errors.get("file", []))
    assert says.lower() in errors.lower(), errors
    assert not Document.objects.exists() and not DocumentNode.objects.exists()
    assert {p for p in media.rglob("*") if p.is_file()} == before


def test_only_a_documents_title_can_be_changed_and_its_tree_not_at_all(staff_client):
    owner = UserFactory()
    _add(staff_client, owner, "kettle.md", KETTLE)
    document = Document.objects.get()
    url = reverse("admin:documents_app_document_change", args=[document.pk])
    page = staff_client.get(url).content.decode()
    assert 'name="title"' in page and 'name="uri"' not in page and 'name="status"' not in page
    staff_client.post(url, {"title": "Renamed", "uri": "", "status": "failed"})
    document.refresh_from_db()
    assert (document.title, document.status) == ("Renamed", "ready") and document.uri.endswith(str(document.id))
    assert document.title_given and DocumentNode.objects.get(document=document, level=0).title == "Renamed"
    node = DocumentNode.objects.filter(document=document).first()
    node_url = reverse("admin:documents_app_documentnode_change", args=[node.pk])
    assert staff_client.post(node_url, {"content": "tampered"}).status_code == 403
    assert staff_client.get(reverse("admin:documents_app_documentnode_add")).status_code == 403
    delete = reverse("admin:documents_app_documentnode_delete", args=[node.pk])
    assert staff_client.post(delete, {"post": "yes"}).status_code == 403


def test_deleting_documents_from_the_list_removes_files_nodes_and_vectors(staff_client):
    owner = UserFactory()
    _add(staff_client, owner, "kettle.md", KETTLE)
    document = Document.objects.get()
    stored = Path(document.file.path)
    url = reverse("admin:documents_app_document_changelist")
    confirm = staff_client.post(url, {"action": "delete_selected", "_selected_action": [document.pk]})
    assert b"Document nodes: " in confirm.content  # what goes with it, in counts
    staff_client.post(url, {"action": "delete_selected", "_selected_action": [document.pk], "post": "yes"})
    assert not Document.objects.exists() and not DocumentNode.objects.exists() and not stored.exists()


def test_documents_once_added_without_a_file_are_repaired_by_a_migration(staff_client):
    from django.apps import apps
    from django.db import connection

    from tests.factories import DocumentFactory, DocumentNodeFactory

    repair = importlib.import_module("documents_app.migrations.0005_repair_documents_added_without_an_upload").repair
    owner = UserFactory()
    broken = DocumentFactory(owner=owner, uri="", file="", status="ready")
    DocumentNodeFactory(document=broken, owner=owner, uri="/chunk_0001", kind="chunk")
    _add(staff_client, owner, "kettle.md", KETTLE)
    fine = Document.objects.get(filename="kettle.md")
    nodes = fine.node_count
    repair(apps, connection.schema_editor())
    broken.refresh_from_db()
    assert broken.uri.endswith(f"/users/{owner.pk}/documents/{broken.id}") and broken.status == "failed"
    assert "upload it again" in broken.error and not DocumentNode.objects.filter(document=broken).exists()
    assert DocumentNode.objects.filter(document=fine).count() == nodes  # a sound document is untouched
