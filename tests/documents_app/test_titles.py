"""A document's title: the uploader's, else the file's own unless it is junk, else its heading, else
its file name made readable; and renaming, which changes the title everywhere it shows without
indexing the file again."""

import pytest
from asgiref.sync import async_to_sync
from channels.layers import get_channel_layer
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client

from documents_app import services, titles
from documents_app.models import Document, DocumentNode
from documents_app.parsing import parse
from foundation.models import ModelCall
from foundation.push import user_group
from retrieval_app.services import retrieval_find
from tests.documents_app import files
from tests.factories import UserFactory, index_document
from tests.samples import KETTLE, MARKDOWN


@pytest.mark.parametrize(
    "title",
    [
        "",
        "   ",
        "about:blank",
        "Untitled",
        "untitled",
        "Untitled document",
        "Untitled-1",
        "Document1",
        "Document 2",
        "New Microsoft Word Document",
        "Book1",
        "Presentation1",
        "title",
        "Title",
        "Insert title here",
        "PowerPoint Presentation",
        "https://example.com/kettle",
        "www.example.com",
        "file:///home/ana/manual.pdf",
        r"C:\Users\ana\Desktop\manual.docx",
        "/home/ana/export/report.pdf",
        "scan0001.pdf",
        "Kettle manual FINAL v2.docx",
        "---",
        "x",
    ],
)
def test_junk_titles_are_recognised(title):
    assert titles.is_junk(title)


@pytest.mark.parametrize(
    "title",
    ["Lumen K2 Kettle User Manual", "Using Node.js with Postgres", "Version 2.0 release notes", "Q3 report", "TCP/IP"],
)
def test_real_titles_are_kept(title):
    assert not titles.is_junk(title)


@pytest.mark.parametrize(
    ("own", "expected"),
    [
        ("Microsoft Word - Quarterly plan.docx", "Quarterly plan"),
        ("Microsoft Word - Budget 2025.docx", "Budget 2025"),
        ("Project roadmap - Google Docs", "Project roadmap"),
        ("Lumen manual", "Lumen manual"),
    ],
)
def test_tool_names_around_a_title_are_dropped(own, expected):
    assert titles.document_title(own=own, headings=[], filename="file.pdf") == expected


@pytest.mark.parametrize(
    ("filename", "expected"),
    [
        ("kettle_manual_v2.pdf", "Kettle manual v2"),
        ("kettle-manual-v2.pdf", "Kettle manual v2"),
        ("Kettle%20manual.pdf", "Kettle manual"),
        ("iPhone_setup_guide.docx", "iPhone setup guide"),
        ("NASA report (1).pdf", "NASA report"),
        ("release.notes.v1.2.md", "Release notes v1.2"),
        (".pdf", "Untitled"),
    ],
)
def test_a_file_name_is_made_readable(filename, expected):
    assert titles.readable_file_name(filename) == expected


def test_the_first_heading_names_a_document_only_when_it_heads_all_of_it():
    assert titles.document_title(own="", headings=[(2, "Kettle guide"), (3, "Safety")], filename="a.md") == (
        "Kettle guide"
    )
    numbered = [(2, "1. Safety"), (2, "2. Filling"), (2, "7. Warranty")]
    assert titles.document_title(own="", headings=numbered, filename="lumen_k2.md") == "Lumen k2"


def _lumen_pdf(*, outline: bool) -> bytes:
    pages = ["Lumen K2 Kettle Manual", "Never immerse the base in water.", "The warranty lasts two years."]
    marks = [("Lumen K2 Kettle Manual", 0, 0), ("Safety", 1, 1), ("Warranty", 1, 2)] if outline else None
    return files.pdf(pages, outline=marks, title="about:blank")


def test_a_pdf_titled_about_blank_is_named_after_its_first_heading():
    assert parse(_lumen_pdf(outline=True), "print.pdf").title == "Lumen K2 Kettle Manual"


def test_a_pdf_titled_about_blank_without_headings_is_named_after_its_file():
    parsed = parse(_lumen_pdf(outline=False), "kettle_manual_v2.pdf")
    assert parsed.title == "Kettle manual v2", "page groups such as 'Pages 1-3' are not headings"


def test_docx_and_html_junk_titles_give_way_to_their_headings():
    docx = files.docx([("Heading 1", "Onboarding"), ("Normal", "Ask IT for a laptop on day one.")])
    assert parse(docx, "Document1.docx").title == "Onboarding"
    html = b"<html><head><title>Untitled document</title></head><body><h1>Release notes</h1><p>New.</p></body></html>"
    assert parse(html, "page.html").title == "Release notes"


def test_markdown_front_matter_names_the_document_and_is_not_indexed():
    text = b"---\ntitle: Kettle care\nauthor: Ana\n---\n# Descaling\n\nDescale monthly.\n"
    parsed = parse(text, "notes.md")
    assert parsed.title == "Kettle care"
    assert all("author" not in block.text for block in parsed.blocks)


def test_markup_in_a_heading_is_not_part_of_its_title():
    parsed = parse(b"# The **Lumen** `K2` [manual](https://example.com)\n\nText.\n", "a.md")
    assert parsed.title == "The Lumen K2 manual" and parsed.blocks[-1].title == "The Lumen K2 manual"


# --- Indexing and renaming ----------------------------------------------------------------------------


def _upload(client, capture, name: str, data: bytes, **extra) -> dict:
    with capture(execute=True):
        response = client.post(
            "/api/documents/upload", {"file": SimpleUploadedFile(name, data), **extra}, format="multipart"
        )
    return client.get(f"/api/documents/{response.json()['doc_id']}").json()


@pytest.mark.django_db
def test_an_uploaded_about_blank_pdf_is_titled_from_its_heading(auth_client, django_capture_on_commit_callbacks):
    doc = _upload(auth_client, django_capture_on_commit_callbacks, "print.pdf", _lumen_pdf(outline=True))
    assert doc["status"] == "ready" and doc["title"] == "Lumen K2 Kettle Manual"
    root = DocumentNode.objects.get(document_id=doc["doc_id"], level=0)
    assert root.title == "Lumen K2 Kettle Manual" and "about:blank" not in root.abstract


@pytest.mark.django_db
def test_the_uploaders_title_wins_and_survives_a_reindex(auth_client, django_capture_on_commit_callbacks):
    doc = _upload(auth_client, django_capture_on_commit_callbacks, "guide.md", MARKDOWN, title="  My   guide ")
    assert doc["title"] == "My guide"
    with django_capture_on_commit_callbacks(execute=True):
        auth_client.post(f"/api/documents/{doc['doc_id']}/reindex")
    assert auth_client.get(f"/api/documents/{doc['doc_id']}").json()["title"] == "My guide"


@pytest.mark.django_db
def test_a_title_from_the_file_is_made_again_on_reindex(user, django_capture_on_commit_callbacks):
    document = index_document(user, "kettle.md", KETTLE)
    Document.objects.filter(pk=document.pk).update(title="about:blank")  # as indexed by an older version
    with django_capture_on_commit_callbacks(execute=True):
        services.document_reindex(document=document)
    assert Document.objects.get(pk=document.pk).title == "Aurora Kettle Guide"


@pytest.fixture
def kettle(user, django_capture_on_commit_callbacks):
    text = b"Read this guide before the first use of the kettle.\n\n" + KETTLE
    with django_capture_on_commit_callbacks(execute=True):
        document, _ = services.document_upload(owner=user, filename="kettle.md", data=text)
    return Document.objects.get(pk=document.pk)


@pytest.mark.django_db
def test_renaming_changes_the_title_everywhere_it_shows_without_indexing_again(
    auth_client, user, kettle, django_capture_on_commit_callbacks
):
    root = DocumentNode.objects.get(document=kettle, level=0)
    nodes_before = dict(DocumentNode.objects.filter(document=kettle).values_list("uri", "id"))
    chunk_vectors = dict(DocumentNode.objects.filter(document=kettle, level__gt=1).values_list("uri", "embedding"))
    embeddings = ModelCall.objects.filter(purpose="document_embedding").count()

    with django_capture_on_commit_callbacks(execute=True):
        response = auth_client.patch(f"/api/documents/{kettle.id}", {"title": "  Kitchen\tkettle   notes "})
    assert response.status_code == 200, response.json()
    assert response.json()["title"] == "Kitchen kettle notes" and response.json()["status"] == "ready"

    assert auth_client.get(f"/api/documents/{kettle.id}").json()["title"] == "Kitchen kettle notes"
    listed = auth_client.get("/api/fs/ls", {"uri": f"viking://resources/users/{user.id}"}).json()["children"]
    assert [c["title"] for c in listed] == ["Kitchen kettle notes"]
    renamed = DocumentNode.objects.get(pk=root.pk)
    assert renamed.title == "Kitchen kettle notes"
    assert renamed.abstract.startswith("Kitchen kettle notes:"), "the abstract names the document anew"
    intro = DocumentNode.objects.get(document=kettle, level=1, kind="chunk")
    assert intro.title == "Kitchen kettle notes", "the text before the first heading is titled after it"
    # Not indexed again: the same nodes; only the vectors of the nodes carrying the title were made.
    assert dict(DocumentNode.objects.filter(document=kettle).values_list("uri", "id")) == nodes_before
    assert dict(DocumentNode.objects.filter(document=kettle, level__gt=1).values_list("uri", "embedding")) == (
        chunk_vectors
    )
    assert ModelCall.objects.filter(purpose="document_embedding").count() == embeddings + 1
    assert renamed.embedding is not None and list(renamed.embedding) != list(root.embedding)
    assert Document.objects.get(pk=kettle.pk).indexed_at == kettle.indexed_at

    hits = retrieval_find(owner=user, query="kitchen notes", limit=5).hits
    assert hits and hits[0].doc_id == str(kettle.id), "search matches the new title"


@pytest.mark.django_db
def test_a_renamed_document_keeps_its_title_and_vectors_when_indexed_again(
    auth_client, kettle, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        auth_client.patch(f"/api/documents/{kettle.id}", {"title": "Kitchen kettle notes"}, format="json")
    before = dict(DocumentNode.objects.filter(document=kettle).values_list("uri", "embedding"))
    embeddings = ModelCall.objects.filter(purpose="document_embedding").count()
    with django_capture_on_commit_callbacks(execute=True):
        auth_client.post(f"/api/documents/{kettle.id}/reindex")
    assert Document.objects.get(pk=kettle.pk).title == "Kitchen kettle notes"
    assert DocumentNode.objects.get(document=kettle, level=0).title == "Kitchen kettle notes"
    after = dict(DocumentNode.objects.filter(document=kettle).values_list("uri", "embedding"))
    assert ModelCall.objects.filter(purpose="document_embedding").count() == embeddings, "no vector made again"
    assert {uri: list(v) for uri, v in after.items()} == {uri: list(v) for uri, v in before.items()}


@pytest.mark.django_db
def test_a_rename_while_indexing_is_kept_by_the_new_tree(user, kettle, monkeypatch, django_capture_on_commit_callbacks):
    original = services._embeddings

    def renamed_meanwhile(document, nodes, overviews):
        services.document_rename(document=document, title="Renamed while indexing")
        return original(document, nodes, overviews)

    monkeypatch.setattr(services, "_embeddings", renamed_meanwhile)
    with django_capture_on_commit_callbacks(execute=True):
        services.document_index(document_id=kettle.id)
    assert Document.objects.get(pk=kettle.pk).title == "Renamed while indexing"
    root = DocumentNode.objects.get(document=kettle, level=0)
    assert root.title == "Renamed while indexing"
    made_from = services._embedding_text(title=root.title, kind=root.kind, text="", overview=root.overview)
    assert root.content_hash == services._hash(made_from) and made_from.startswith("Renamed while indexing\n")


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ({}, "This field is required."),
        ({"title": ""}, "This field may not be blank."),
        ({"title": "   \n\t "}, "This field may not be blank."),
        ({"title": "x" * 513}, "Ensure this field has no more than 512 characters."),
        ({"title": "bad\x00title"}, "must not contain NUL characters."),
        ({"title": 12}, None),
        ({"title": None}, "This field may not be null."),
    ],
)
@pytest.mark.django_db
def test_a_bad_title_is_a_400_in_the_contracts_shape(auth_client, kettle, body, problem):
    response = auth_client.patch(f"/api/documents/{kettle.id}", body, format="json")
    if problem is None:  # a number is read as its text, as everywhere in the API
        assert response.status_code == 200 and response.json()["title"] == "12"
        return
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["code"] == "invalid" and problem in error["details"]["fields"]["title"]
    assert Document.objects.get(pk=kettle.pk).title == "Aurora Kettle Guide"


@pytest.mark.django_db
def test_the_longest_title_is_kept_whole(auth_client, kettle):
    title = "K" * 512
    response = auth_client.patch(f"/api/documents/{kettle.id}", {"title": f"  {title}  "}, format="json")
    assert response.status_code == 200 and Document.objects.get(pk=kettle.pk).title == title


@pytest.mark.django_db
def test_another_users_document_cannot_be_renamed(auth_client, django_capture_on_commit_callbacks):
    other = UserFactory()
    theirs = index_document(other, "secret.md", MARKDOWN)
    response = auth_client.patch(f"/api/documents/{theirs.id}", {"title": "mine now"}, format="json")
    assert response.status_code == 404 and response.json()["error"]["code"] == "document_not_found"
    assert Document.objects.get(pk=theirs.pk).title == "Warranty guide"
    missing = auth_client.patch("/api/documents/not-a-uuid", {"title": "x"}, format="json")
    assert missing.status_code == 404


@pytest.mark.django_db
def test_the_documents_page_renames_with_its_session_and_csrf_token(user, kettle):
    browser = Client(enforce_csrf_checks=True)
    browser.force_login(user)
    page = browser.get("/documents/").content.decode()
    assert "recollect/app/documents.js" in page
    token = page.split('name="csrf-token" content="', 1)[1].split('"', 1)[0]
    url = f"/api/documents/{kettle.id}"
    refused = browser.patch(url, {"title": "No token"}, content_type="application/json")
    assert refused.status_code == 403 and Document.objects.get(pk=kettle.pk).title == "Aurora Kettle Guide"
    response = browser.patch(
        url,
        {"title": "Kettle care"},
        content_type="application/json",
        HTTP_X_CSRFTOKEN=token,
        HTTP_ACCEPT="application/json",
    )
    assert response.status_code == 200 and response.json()["title"] == "Kettle care"


@pytest.mark.django_db(transaction=True)
def test_a_rename_reaches_the_owners_open_pages(django_capture_on_commit_callbacks):
    owner = UserFactory()
    document = index_document(owner, "kettle.md", KETTLE)
    layer = get_channel_layer()
    channel = async_to_sync(layer.new_channel)()
    async_to_sync(layer.group_add)(user_group(owner.id), channel)
    services.document_rename(document=document, title="Kettle care")
    event = async_to_sync(layer.receive)(channel)["event"]
    assert event["type"] == "document" and event["doc_id"] == str(document.id)
    assert event["title"] == "Kettle care" and event["status"] == "ready"
    async_to_sync(layer.group_discard)(user_group(owner.id), channel)


def test_a_title_is_one_line_without_control_characters():
    assert titles.tidy("Kettle\x07 guide\n\nfor  the\u2028K2 ") == "Kettle guide for the K2"
    assert len(titles.tidy("w" * 600)) == titles.MAX_TITLE_CHARS


def test_headings_sharing_a_pdf_page_each_keep_their_own_text():
    pages = [
        "Lumen K2 Kettle Manual\nRead this first.\n6. Specifications\nThe K2 draws 2200 W.\n7. Warranty\n"
        "Two years from purchase.\nKeep the receipt.",
        "8. Contact\nCall the service line.",
    ]
    outline = [("6. Specifications", 0, 0), ("7. Warranty", 0, 0), ("8. Contact", 0, 1)]
    parsed = parse(files.pdf(pages, outline=outline), "kettle_manual_v2.pdf")
    assert [(b.level, b.title, b.text) for b in parsed.blocks] == [
        (0, "", "Lumen K2 Kettle Manual\nRead this first."),
        (1, "6. Specifications", "The K2 draws 2200 W."),
        (1, "7. Warranty", "Two years from purchase.\nKeep the receipt."),
        (1, "8. Contact", "Call the service line."),
    ]
    assert parsed.title == "Kettle manual v2", "the first of several chapters does not name the document"
