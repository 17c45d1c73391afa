"""Documents through the API: upload each format, see it become ready, browse its tree at every tier,
reindex and delete it; bad files are refused or fail with their reason, and nothing else is affected."""

import os

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from documents_app import services
from documents_app.models import Document, DocumentNode
from foundation.ai.embeddings import LOCAL_MODEL_NAME
from foundation.models import ModelCall
from retrieval_app.models import SearchTrace
from tests.documents_app import files
from tests.factories import UserFactory
from tests.samples import MARKDOWN

pytestmark = pytest.mark.django_db

TERMS = [
    "the supplier delivers pallets to the Lyon warehouse",
    "invoices are payable within thirty days",
    "damaged goods must be reported within 48 hours",
    "the buyer inspects samples from every batch",
    "prices are fixed until the end of the fiscal year",
    "disputes go to the Paris commercial court",
    "insurance covers transport up to 200000 euros",
    "either party may terminate with ninety days notice",
    "late deliveries incur a penalty of two percent per week",
    "confidential data stays within the EU",
]
LONG_SECTION = " ".join(f"Clause {i} says {TERMS[i % len(TERMS)]} for order {1000 + i}." for i in range(120))


def _upload(client, name, data, capture, **extra):
    with capture(execute=True):
        return client.post(
            "/api/documents/upload", {"file": SimpleUploadedFile(name, data), **extra}, format="multipart"
        )


@pytest.mark.parametrize(
    ("name", "data", "expected_text"),
    [
        ("guide.md", MARKDOWN, "Parts and labour are covered for two years."),
        ("notes.txt", b"Plain notes about the Lisbon offsite budget of 42000 euros.", "42000 euros"),
        (
            "page.html",
            b"<html><body><h1>Release</h1><p>New export formats arrive in May.</p></body></html>",
            "New export formats arrive in May.",
        ),
        (
            "manual.pdf",
            files.pdf(
                ["Preface text here.", "Chapter one explains the pump maintenance schedule."],
                outline=[("Chapter 1", 0, 1)],
            ),
            "pump maintenance schedule",
        ),
        (
            "onboarding.docx",
            files.docx([("Heading 1", "First week"), ("Normal", "Ask IT for a laptop on day one.")]),
            "Ask IT for a laptop on day one.",
        ),
    ],
)
def test_each_format_is_uploaded_indexed_and_browsable(
    auth_client, user, django_capture_on_commit_callbacks, name, data, expected_text
):
    response = _upload(auth_client, name, data, django_capture_on_commit_callbacks)
    assert response.status_code == 202
    body = response.json()
    assert body["status"] == "pending"
    assert body["uri"] == f"viking://resources/users/{user.id}/documents/{body['doc_id']}"

    detail = auth_client.get(f"/api/documents/{body['doc_id']}").json()
    assert detail["status"] == "ready", detail["error"]
    assert detail["abstract"] and detail["overview"] and detail["node_count"] >= 2
    assert "\n" not in detail["abstract"]

    root = auth_client.get("/api/fs/ls", {"uri": f"viking://resources/users/{user.id}"}).json()
    assert [c["uri"] for c in root["children"]] == [body["uri"]]
    assert root["children"][0]["abstract"] == detail["abstract"]
    full = auth_client.get("/api/fs/read", {"uri": body["uri"], "level": "L2"}).json()
    assert expected_text in full["text"]
    nodes = DocumentNode.objects.filter(document_id=body["doc_id"])
    assert all(n.embedding is not None and n.embedding_model == LOCAL_MODEL_NAME for n in nodes)
    assert all(n.abstract and n.overview for n in nodes)
    assert all(bool(n.content) == (n.kind == "chunk") for n in nodes)


def test_the_tree_can_be_walked_tier_by_tier(auth_client, django_capture_on_commit_callbacks):
    data = f"# Contract\n\nGeneral terms.\n\n## Delivery\n\n{LONG_SECTION}\n\n## Payment\n\n{LONG_SECTION}".encode()
    doc = _upload(auth_client, "contract.md", data, django_capture_on_commit_callbacks).json()
    top = auth_client.get("/api/fs/ls", {"uri": doc["uri"]}).json()["children"]
    assert [(c["kind"], c["title"]) for c in top] == [("section", "Contract")]
    sections = auth_client.get("/api/fs/ls", {"uri": top[0]["uri"]}).json()["children"]
    assert [c["title"] for c in sections] == ["Contract", "Delivery", "Payment"]
    delivery = sections[1]
    chunks = auth_client.get("/api/fs/ls", {"uri": delivery["uri"]}).json()["children"]
    assert len(chunks) > 2 and all(c["kind"] == "chunk" and not c["is_directory"] for c in chunks)
    page = auth_client.get("/api/fs/ls", {"uri": delivery["uri"], "offset": 1, "limit": 1}).json()
    assert page["total"] == len(chunks) and [c["uri"] for c in page["children"]] == [chunks[1]["uri"]]
    l0 = auth_client.get("/api/fs/read", {"uri": delivery["uri"], "level": "L0"}).json()["text"]
    l1 = auth_client.get("/api/fs/read", {"uri": delivery["uri"], "level": "L1"}).json()["text"]
    l2 = auth_client.get("/api/fs/read", {"uri": delivery["uri"], "level": "L2"}).json()["text"]
    assert len(l0) < len(l1) < len(l2)
    assert l2.count("Clause 57 says") == 1, "the stitched full text has no repeated overlaps"
    assert all(f"Clause {i} says" in l2 for i in range(120))


def test_the_same_bytes_uploaded_again_return_the_same_document(auth_client, django_capture_on_commit_callbacks):
    first = _upload(auth_client, "a.md", MARKDOWN, django_capture_on_commit_callbacks)
    second = _upload(auth_client, "copy.md", MARKDOWN, django_capture_on_commit_callbacks)
    assert second.status_code == 200 and second.json()["doc_id"] == first.json()["doc_id"]
    assert Document.objects.count() == 1


@pytest.mark.parametrize(
    ("name", "data", "code"),
    [
        ("empty.txt", b"", "unsupported_document"),
        ("empty.pdf", b"", "unsupported_document"),
        ("report.pdf", b"just text pretending to be a PDF", "unsupported_document"),
        ("image.png", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "unsupported_document"),
    ],
)
def test_unreadable_uploads_are_refused_at_once(auth_client, name, data, code):
    response = auth_client.post("/api/documents/upload", {"file": SimpleUploadedFile(name, data)}, format="multipart")
    assert response.status_code == 400 and response.json()["error"]["code"] == code
    assert not Document.objects.exists()


def test_an_upload_over_the_limit_is_a_413(auth_client, settings):
    settings.DOCUMENT_MAX_BYTES = 1000
    response = auth_client.post(
        "/api/documents/upload", {"file": SimpleUploadedFile("big.txt", b"x " * 5000)}, format="multipart"
    )
    assert response.status_code == 413 and response.json()["error"]["code"] == "document_too_large"


def test_a_missing_file_field_is_a_400(auth_client):
    response = auth_client.post("/api/documents/upload", {"title": "no file"}, format="multipart")
    assert response.status_code == 400 and "file" in response.json()["error"]["message"]


@pytest.mark.parametrize(
    ("name", "data", "reason"),
    [
        ("scan.pdf", files.pdf_without_text(), "no text to index (a scanned PDF without a text layer?)"),
        ("bomb.docx", files.zip_bomb_docx(), "possible zip bomb"),
        ("broken.pdf", b"%PDF-1.7\nnot really", "The PDF is damaged"),
    ],
)
def test_files_that_fail_in_the_worker_say_why_and_affect_nothing_else(
    auth_client, django_capture_on_commit_callbacks, name, data, reason
):
    good = _upload(auth_client, "good.md", MARKDOWN, django_capture_on_commit_callbacks).json()
    bad = _upload(auth_client, name, data, django_capture_on_commit_callbacks)
    assert bad.status_code == 202
    detail = auth_client.get(f"/api/documents/{bad.json()['doc_id']}").json()
    assert detail["status"] == "failed" and reason in detail["error"]
    assert not DocumentNode.objects.filter(document_id=bad.json()["doc_id"]).exists()
    assert auth_client.get(f"/api/documents/{good['doc_id']}").json()["status"] == "ready"


def test_html_scripts_never_reach_the_index(auth_client, django_capture_on_commit_callbacks):
    html = b"<html><body><script>stealCookies()</script><p>Visible guidance on expense claims.</p></body></html>"
    doc = _upload(auth_client, "page.html", html, django_capture_on_commit_callbacks).json()
    assert not DocumentNode.objects.filter(document_id=doc["doc_id"], content__contains="stealCookies").exists()


def test_delete_removes_every_node_vector_file_and_trace_reference(
    auth_client, user, django_capture_on_commit_callbacks
):
    doc = _upload(auth_client, "a.md", MARKDOWN, django_capture_on_commit_callbacks).json()
    document = Document.objects.get(pk=doc["doc_id"])
    stored = document.file.path
    trace = SearchTrace.objects.create(owner=user, query="q", document_ids=[document.id])
    with django_capture_on_commit_callbacks(execute=True):
        assert auth_client.delete(f"/api/documents/{doc['doc_id']}").status_code == 204
    assert not Document.objects.exists() and not DocumentNode.objects.exists()

    assert not os.path.exists(stored)
    trace.refresh_from_db()
    assert trace.document_ids == []
    assert auth_client.get(f"/api/documents/{doc['doc_id']}").status_code == 404


def test_reindex_keeps_the_vectors_of_unchanged_chunks(auth_client, django_capture_on_commit_callbacks):
    doc = _upload(auth_client, "a.md", MARKDOWN, django_capture_on_commit_callbacks).json()
    before = dict(DocumentNode.objects.values_list("uri", "embedding"))
    embedded = ModelCall.objects.filter(purpose="document_embedding").count()
    with django_capture_on_commit_callbacks(execute=True):
        response = auth_client.post(f"/api/documents/{doc['doc_id']}/reindex")
    assert response.status_code == 202
    assert auth_client.get(f"/api/documents/{doc['doc_id']}").json()["status"] == "ready"
    after = dict(DocumentNode.objects.values_list("uri", "embedding"))
    assert before.keys() == after.keys()
    assert ModelCall.objects.filter(purpose="document_embedding").count() == embedded, "no vector was made again"


def test_a_run_that_dies_midway_leaves_the_previous_tree_and_never_marks_ready(
    auth_client, monkeypatch, django_capture_on_commit_callbacks
):
    doc = _upload(auth_client, "a.md", MARKDOWN, django_capture_on_commit_callbacks).json()
    nodes_before = set(DocumentNode.objects.values_list("uri", flat=True))

    def killed(*args, **kwargs):
        raise SystemExit("worker killed")

    monkeypatch.setattr(services, "_embeddings", killed)
    with pytest.raises(SystemExit):
        services.document_index(document_id=doc["doc_id"])
    document = Document.objects.get(pk=doc["doc_id"])
    assert document.status == "indexing", "left to be retried, not marked ready"
    assert set(DocumentNode.objects.values_list("uri", flat=True)) == nodes_before
    monkeypatch.undo()
    # Redis hands the unacknowledged task to a worker again once the dead run's claim is stale.
    Document.objects.filter(pk=doc["doc_id"]).update(updated_at=document.updated_at - services.indexing_stale_after())
    assert services.document_index(document_id=doc["doc_id"]).status == "ready"


def test_another_users_documents_are_not_found_anywhere(auth_client, django_capture_on_commit_callbacks):
    other = UserFactory()
    with django_capture_on_commit_callbacks(execute=True):
        theirs, _ = services.document_upload(owner=other, filename="secret.md", data=MARKDOWN)
    for method, url in [
        ("get", f"/api/documents/{theirs.id}"),
        ("delete", f"/api/documents/{theirs.id}"),
        ("post", f"/api/documents/{theirs.id}/reindex"),
    ]:
        response = getattr(auth_client, method)(url)
        assert response.status_code == 404 and response.json()["error"]["code"] == "document_not_found"
    assert auth_client.get("/api/fs/ls", {"uri": f"viking://resources/users/{other.id}"}).status_code == 404
    assert auth_client.get("/api/fs/read", {"uri": theirs.uri, "level": "L2"}).status_code == 404
    assert auth_client.get("/api/documents").json()["count"] == 0
    assert Document.objects.get(pk=theirs.pk).status == "ready"


@pytest.mark.parametrize(
    ("params", "status"),
    [
        ({"uri": "http://example.com"}, 400),
        ({"uri": "viking://resources/users/abc"}, 400),
        ({}, 400),
        ({"uri": "viking://resources/users/{me}/documents/00000000-0000-0000-0000-000000000000"}, 404),
    ],
)
def test_bad_uris_are_4xx(auth_client, user, params, status):
    if "uri" in params:
        params = {"uri": params["uri"].replace("{me}", str(user.id))}
    assert auth_client.get("/api/fs/ls", params).status_code == status


def test_a_bad_level_is_a_400(auth_client, user, django_capture_on_commit_callbacks):
    doc = _upload(auth_client, "a.md", MARKDOWN, django_capture_on_commit_callbacks).json()
    assert auth_client.get("/api/fs/read", {"uri": doc["uri"], "level": "L9"}).status_code == 400


def test_tiers_come_from_the_llm_when_one_is_configured(auth_client, hosted_llm, django_capture_on_commit_callbacks):
    hosted_llm.reply = lambda messages: "An overview written by the model about warranty coverage."
    doc = _upload(auth_client, "a.md", MARKDOWN, django_capture_on_commit_callbacks).json()
    detail = auth_client.get(f"/api/documents/{doc['doc_id']}").json()
    assert detail["overview"] == "An overview written by the model about warranty coverage."
    assert detail["abstract"] == "An overview written by the model about warranty coverage."
    assert ModelCall.objects.filter(purpose="document_tier", backend="litellm").exists()


def test_a_uri_with_a_malformed_document_id_is_a_400(auth_client, user):
    uri = f"viking://resources/users/{user.id}/documents/{'-' * 36}"
    assert auth_client.get("/api/fs/ls", {"uri": uri}).status_code == 400
    assert auth_client.get("/api/fs/read", {"uri": uri, "level": "L1"}).status_code == 400


def test_a_failed_document_uploaded_again_is_indexed_again_under_its_new_name(
    auth_client, django_capture_on_commit_callbacks
):
    text = b"# Real heading\n\nThe body of a Markdown file that was saved with a .pdf name by mistake."
    first = _upload(auth_client, "notes.txt", text, django_capture_on_commit_callbacks).json()
    Document.objects.filter(pk=first["doc_id"]).update(status="failed", error="something went wrong")
    again = _upload(auth_client, "notes.md", text, django_capture_on_commit_callbacks)
    assert again.status_code == 202 and again.json()["doc_id"] == first["doc_id"]
    document = Document.objects.get(pk=first["doc_id"])
    assert document.status == "ready" and document.filename == "notes.md" and document.media_type == "text/markdown"


def test_a_second_run_leaves_the_work_to_the_one_in_progress(auth_client, django_capture_on_commit_callbacks):
    doc = _upload(auth_client, "a.md", MARKDOWN, django_capture_on_commit_callbacks).json()
    from django.utils import timezone

    Document.objects.filter(pk=doc["doc_id"]).update(status="indexing", updated_at=timezone.now())
    embedded = ModelCall.objects.filter(purpose="document_embedding").count()
    assert services.document_index(document_id=doc["doc_id"]).status == "indexing"
    assert ModelCall.objects.filter(purpose="document_embedding").count() == embedded


def test_retries_used_up_leave_the_document_failed_with_the_reason(
    auth_client, settings, fake_llm, django_capture_on_commit_callbacks
):
    settings.EMBEDDING_MODEL, settings.EMBEDDING_API_BASE, settings.EMBEDDING_MAX_RETRIES = (
        "openai/test-embed",
        fake_llm.url,
        0,
    )
    settings.CELERY_TASK_EAGER_PROPAGATES = False
    fake_llm.failures = 1000
    doc = _upload(auth_client, "a.md", MARKDOWN, django_capture_on_commit_callbacks).json()
    detail = auth_client.get(f"/api/documents/{doc['doc_id']}").json()
    assert detail["status"] == "failed" and detail["error"].startswith("Indexing failed:")


def test_a_waiting_document_says_its_place_in_line_and_about_how_long(auth_client, user):
    """Uploads wait their turn one at a time: each waiting one says where it stands and roughly when it
    will be ready, from how fast the documents before it went; a ready one says nothing of a line."""
    from datetime import timedelta

    from django.utils import timezone

    now = timezone.now()
    for n in range(5):  # five documents finished two seconds apart a moment ago
        document, _ = services.document_upload(
            owner=user, filename=f"done-{n}.md", data=f"# Done {n}\n".encode(), enqueue=False
        )
        Document.objects.filter(pk=document.pk).update(status="ready", indexed_at=now - timedelta(seconds=10 - 2 * n))
    waiting = [
        services.document_upload(owner=user, filename=f"wait-{n}.md", data=f"# Wait {n}\n".encode(), enqueue=False)[0]
        for n in range(3)
    ]

    listed = {doc["doc_id"]: doc for doc in auth_client.get("/api/documents").json()["results"]}
    detail = auth_client.get(f"/api/documents/{waiting[2].pk}").json()

    assert [listed[str(doc.pk)]["queue"] for doc in waiting] == [
        {"place": 1, "estimated_wait_s": 2.0},
        {"place": 2, "estimated_wait_s": 4.0},
        {"place": 3, "estimated_wait_s": 6.0},
    ]
    assert detail["queue"] == {"place": 3, "estimated_wait_s": 6.0}
    assert all(doc["queue"] is None for doc in listed.values() if doc["status"] == "ready")


def test_a_manual_waiting_ahead_counts_for_more_than_a_note(auth_client, user):
    """Each document's share of the wait follows its size: a manual of 200 KB ahead in line holds the note
    behind it up far longer than a note ahead does."""
    from datetime import timedelta

    from django.utils import timezone

    note = b"# Note\n\n" + b"The valve is checked every week by the supplier. " * 40  # 2 KB
    now = timezone.now()
    for n in range(5):  # five notes finished a quarter of a second apart a moment ago
        document, _ = services.document_upload(
            owner=user, filename=f"n-{n}.md", data=note + bytes([65 + n]), enqueue=False
        )
        Document.objects.filter(pk=document.pk).update(status="ready", indexed_at=now - timedelta(seconds=2 - n / 4))
    line = [("first.md", note + b"1"), ("manual.md", note * 100), ("last.md", note + b"2")]
    waiting = [services.document_upload(owner=user, filename=name, data=data, enqueue=False)[0] for name, data in line]

    listed = {doc["doc_id"]: doc for doc in auth_client.get("/api/documents").json()["results"]}
    first, manual, last = (listed[str(doc.pk)]["queue"]["estimated_wait_s"] for doc in waiting)

    assert 0.1 <= first <= 0.5 and 20 <= manual - first <= 30 and 0.1 <= last - manual <= 0.5


def test_on_a_new_site_a_line_of_notes_is_estimated_in_seconds(auth_client, user):
    """With nothing indexed yet, the estimate comes from the documents' sizes, not a guess per document:
    forty notes of 2 KB are ready in seconds, and the last in line says so."""
    note = b"# Note\n\n" + b"The valve is checked every week by the supplier. " * 40
    waiting = [
        services.document_upload(owner=user, filename=f"{n}.md", data=note + str(n).encode(), enqueue=False)[0]
        for n in range(40)
    ]
    detail = auth_client.get(f"/api/documents/{waiting[-1].pk}").json()
    assert detail["queue"]["place"] == 40 and 4 <= detail["queue"]["estimated_wait_s"] <= 20


def test_listing_documents_costs_the_same_queries_however_many_wait(auth_client, user, django_assert_max_num_queries):
    for n in range(3):
        services.document_upload(owner=user, filename=f"a-{n}.md", data=f"# A {n}\n".encode(), enqueue=False)
    with django_assert_max_num_queries(7) as few:  # token, count, page, and the line: who waits, how fast
        auth_client.get("/api/documents")
    for n in range(20):
        services.document_upload(owner=user, filename=f"b-{n}.md", data=f"# B {n}\n".encode(), enqueue=False)
    with django_assert_max_num_queries(len(few.captured_queries)):
        assert len(auth_client.get("/api/documents").json()["results"]) == 23
