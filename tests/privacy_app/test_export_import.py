"""Export and import: a person's data leaves as one zip and comes back, whole, into any account, once."""

from __future__ import annotations

import hashlib
import io
import json
import zipfile

import pytest
from django.core.management import call_command
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from documents_app.models import Document
from privacy_app.models import ImportJob
from retrieval_app.recall import memory_recall
from sessions_app import services as sessions
from sessions_app.models import Archive, ChatSession, Memory, Message
from tests.factories import UserFactory, index_document
from tests.samples import KETTLE

pytestmark = pytest.mark.django_db(transaction=True)

CONVERSATION = [
    ("user", "Hi, I'm Priya and I live in Lisbon. I am allergic to peanuts."),
    ("assistant", "Noted: you live in Lisbon and are allergic to peanuts."),
    ("user", "My sister Ana plays the cello in the Porto orchestra."),
    ("assistant", "Noted: your sister Ana plays the cello."),
]


def _client(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
    return client


def _library(user) -> None:
    """A person with a committed conversation, a live one, memories and a document."""
    first = sessions.session_create(owner=user, title="Getting to know Priya", metadata={"topic": "intro"})
    sessions.message_bulk_create(
        session=first,
        messages=[sessions.NewMessage(role, text, metadata={"n": i}) for i, (role, text) in enumerate(CONVERSATION)],
    )
    sessions.session_commit(session=first)
    live = sessions.session_create(owner=user, title="Kettle care", agent_id="helper-bot")
    sessions.message_bulk_create(
        session=live, messages=[sessions.NewMessage("user", "How often should I descale the Aurora kettle?")]
    )
    index_document(user, "kettle.md", KETTLE)


def _export(client, **query) -> bytes:
    response = client.get("/api/export", query)
    assert response.status_code == 200, response.content[:500]
    assert response["Content-Disposition"].startswith("attachment;")
    return b"".join(response.streaming_content)


def _import(client, data: bytes, name: str = "export.zip"):
    return client.post("/api/import", {"file": _named(data, name)}, format="multipart")


def _named(data: bytes, name: str):
    upload = io.BytesIO(data)
    upload.name = name
    return upload


def _snapshot(user) -> dict:
    """What a person would notice of their data: counts, texts, titles, links."""
    return {
        "sessions": sorted(
            (s.title, s.agent_id, json.dumps(s.metadata)) for s in ChatSession.objects.filter(owner=user)
        ),
        "messages": sorted(
            (m.session.title, m.seq, m.role, m.content, json.dumps(m.metadata), m.archive is not None)
            for m in Message.objects.filter(owner=user).select_related("session", "archive")
        ),
        "archives": sorted(
            (a.session.title, a.index, a.abstract, a.overview) for a in Archive.objects.filter(owner=user)
        ),
        "memories": sorted(
            (m.category, m.key, m.content, m.superseded_by_id is None, m.source_messages.count())
            for m in Memory.objects.filter(owner=user)
        ),
        "documents": sorted(
            (d.title, d.filename, d.content_hash, d.status) for d in Document.objects.filter(owner=user)
        ),
    }


def test_an_export_holds_everything_with_a_manifest_that_checks_it():
    owner = UserFactory()
    _library(owner)
    data = _export(_client(owner))
    archive = zipfile.ZipFile(io.BytesIO(data))
    manifest = json.loads(archive.read("manifest.json"))
    assert manifest["format"] == "recollect-export" and manifest["version"] == 1
    assert manifest["embedding"]["model"] and manifest["embedding"]["vectors_included"]
    assert manifest["counts"] == {
        "sessions": 2,
        "archives": 1,
        "messages": 5,
        "memories": Memory.objects.filter(owner=owner).count(),
        "documents": 1,
    }
    for name, entry in manifest["files"].items():
        assert hashlib.sha256(archive.read(name)).hexdigest() == entry["sha256"], name
    document = json.loads(archive.read("documents.jsonl"))
    assert archive.read(document["file"]) == KETTLE  # the original file, byte for byte
    messages = [json.loads(line) for line in archive.read("messages.jsonl").splitlines()]
    assert [m["content"] for m in messages if m["session_id"] == messages[0]["session_id"]][:1]
    memories = [json.loads(line) for line in archive.read("memories.jsonl").splitlines()]
    message_ids = {m["id"] for m in messages}
    assert memories and all(set(m["source_message_ids"]) <= message_ids for m in memories)
    assert any(m["source_message_ids"] for m in memories) and all(m["source_archive_id"] for m in memories)


def test_a_round_trip_into_a_fresh_account_gives_the_same_data_and_the_same_recall():
    owner, newcomer = UserFactory(), UserFactory()
    _library(owner)
    data = _export(_client(owner))
    response = _import(_client(newcomer), data)
    assert response.status_code == 201, response.content
    assert response.json()["state"] == "done" and response.json()["done"] == response.json()["total"]
    assert _snapshot(newcomer) == _snapshot(owner)
    # Everything is the newcomer's own, with new ids; the owner's rows are untouched.
    assert not set(ChatSession.objects.filter(owner=newcomer).values_list("id", flat=True)) & set(
        ChatSession.objects.filter(owner=owner).values_list("id", flat=True)
    )
    assert Document.objects.get(owner=newcomer).status == "ready"  # indexed by the usual path
    question = "Where does Priya live?"
    theirs, mine = memory_recall(owner=owner, query=question), memory_recall(owner=newcomer, query=question)
    assert mine["count"] == theirs["count"] > 0
    assert [m["content"] for m in mine["messages"]] == [m["content"] for m in theirs["messages"]]
    assert "Lisbon" in mine["messages"][0]["content"]


def test_vectors_of_the_same_model_are_reused_and_made_again_without_them():
    owner, reuser, remaker = UserFactory(), UserFactory(), UserFactory()
    _library(owner)
    with_vectors, without = _export(_client(owner)), _export(_client(owner), vectors="false")
    assert len(without) < len(with_vectors)
    _import(_client(reuser), with_vectors)
    _import(_client(remaker), without)
    for user in (reuser, remaker):
        assert not Message.objects.filter(owner=user, embedding__isnull=True).exists()
    source = {m.content: list(m.embedding) for m in Message.objects.filter(owner=owner)}
    assert {m.content: list(m.embedding) for m in Message.objects.filter(owner=reuser)} == source


def test_importing_twice_changes_nothing_and_a_newer_export_adds_only_what_is_new():
    owner, newcomer = UserFactory(), UserFactory()
    _library(owner)
    client = _client(newcomer)
    data = _export(_client(owner))
    _import(client, data)
    before = _snapshot(newcomer)
    again = _import(client, data).json()
    assert again["state"] == "done" and again["done"] == 0 and sum(again["skipped"].values()) == again["total"]
    assert _snapshot(newcomer) == before
    live = ChatSession.objects.get(owner=owner, title="Kettle care")
    sessions.message_bulk_create(session=live, messages=[sessions.NewMessage("user", "Citric acid works best.")])
    _import(client, _export(_client(owner)))
    mine = ChatSession.objects.get(owner=newcomer, title="Kettle care")
    assert list(mine.messages.values_list("content", flat=True)) == [
        "How often should I descale the Aurora kettle?",
        "Citric acid works best.",
    ]
    assert ChatSession.objects.filter(owner=newcomer).count() == 2


def test_importing_someone_elses_export_touches_nothing_of_theirs():
    owner, other = UserFactory(), UserFactory()
    _library(owner)
    before = _snapshot(owner)
    data = _export(_client(owner))
    assert _import(_client(other), data).status_code == 201
    assert _import(_client(other), data).status_code == 201
    assert _snapshot(owner) == before
    assert Memory.objects.filter(owner=owner).count() == Memory.objects.filter(owner=other).count()
    # And the owner importing their own export elsewhere-made copy changes nothing of theirs either.
    assert _import(_client(owner), _export(_client(other))).status_code == 201
    assert ChatSession.objects.filter(owner=owner).count() == 4


def test_a_memory_the_importer_already_holds_is_merged_not_duplicated():
    owner, newcomer = UserFactory(), UserFactory()
    _library(owner)
    memory = Memory.objects.filter(owner=owner, superseded_by__isnull=True).first()
    Memory.objects.create(
        owner=newcomer, agent_id=memory.agent_id, category=memory.category, key=memory.key, content="An older text."
    )
    Memory.objects.filter(owner=newcomer).update(updated_at="2001-01-01T00:00:00Z")
    _import(_client(newcomer), _export(_client(owner)))
    current = Memory.objects.get(owner=newcomer, key=memory.key, category=memory.category, superseded_by__isnull=True)
    assert current.content == memory.content
    assert (
        Memory.objects.filter(owner=newcomer, key=memory.key, content="An older text.").get().superseded_by == current
    )


def test_a_plain_openai_message_list_becomes_one_conversation_once():
    user = UserFactory()
    client = _client(user)
    messages = [
        {"role": "system", "content": "You are helpful."},
        {"role": "user", "content": "I keep bees in Sintra."},
        {"role": "assistant", "content": [{"type": "text", "text": "Bees in Sintra, noted."}]},
        {"role": "tool", "content": "ignored"},
    ]
    response = _import(client, json.dumps(messages).encode(), "chat.json")
    assert response.status_code == 201 and response.json()["counts"] == {"sessions": 1, "messages": 3}
    session = ChatSession.objects.get(owner=user)
    assert session.title == "I keep bees in Sintra."
    assert list(session.messages.values_list("role", "content")) == [
        ("system", "You are helpful."),
        ("user", "I keep bees in Sintra."),
        ("assistant", "Bees in Sintra, noted."),
    ]
    assert client.post("/api/import", {"messages": messages, "title": "Bees"}, format="json").status_code == 201
    assert _import(client, json.dumps(messages).encode(), "chat.json").json()["skipped"] == {"messages": 3}
    assert ChatSession.objects.filter(owner=user).count() == 2  # the JSON body differs (a title): its own


def test_a_large_import_runs_in_a_worker_with_its_status_readable(settings):
    owner, newcomer = UserFactory(), UserFactory()
    _library(owner)
    settings.IMPORT_INLINE_MAX_BYTES = 0
    client = _client(newcomer)
    response = _import(client, _export(_client(owner)))
    assert response.status_code == 202
    status = client.get(f"/api/import/{response.json()['import_id']}").json()  # tasks run inline in tests
    assert status["state"] == "done" and status["done"] == status["total"] == sum(status["totals"].values())
    assert ChatSession.objects.filter(owner=newcomer).count() == 2
    assert _client(owner).get(f"/api/import/{status['import_id']}").status_code == 404
    assert client.get("/api/import/not-a-uuid").status_code == 404


def test_the_commands_export_and_import_with_the_same_result(tmp_path):
    owner, newcomer = UserFactory(), UserFactory()
    _library(owner)
    target = tmp_path / "mine.zip"
    call_command("export", user=owner.username, output=str(target), stdout=io.StringIO())
    out = io.StringIO()
    call_command("import", str(target), user=newcomer.username, stdout=out, stderr=io.StringIO())
    assert ": done;" in out.getvalue()
    assert _snapshot(newcomer) == _snapshot(owner)


def test_the_okf_export_is_markdown_with_front_matter():
    owner = UserFactory()
    _library(owner)
    bundle = zipfile.ZipFile(io.BytesIO(_export(_client(owner), format="okf")))
    names = bundle.namelist()
    assert "index.md" in names and 'okf_version: "0.1"' in bundle.read("index.md").decode()
    memories = [n for n in names if n.startswith("memories/") and not n.endswith("index.md")]
    overviews = [n for n in names if n.startswith("conversations/") and not n.endswith("index.md")]
    assert len(memories) == Memory.objects.filter(owner=owner, superseded_by__isnull=True).count()
    assert len(overviews) == 1
    text = bundle.read(memories[0]).decode()
    front = text.split("---\n")[1]
    assert "type: memory" in front and "resource: viking://user/" in front and "category:" in front
    assert "Lisbon" in bundle.read(overviews[0]).decode() or "Priya" in bundle.read(overviews[0]).decode()


# --- bad input ---------------------------------------------------------------------------------------


def _zip(files: dict[str, bytes], manifest: dict | None = None) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in files.items():
            archive.writestr(name, data)
        if manifest is not None:
            archive.writestr("manifest.json", json.dumps(manifest))
    return buffer.getvalue()


def _manifest(files: dict[str, bytes], **changes) -> dict:
    listed = {name: {"sha256": hashlib.sha256(data).hexdigest()} for name, data in files.items()}
    return {"format": "recollect-export", "version": 1, "source": {"id": "x"}, "files": listed, **changes}


def _refused(client, data: bytes, status: int, code: str) -> dict:
    response = _import(client, data)
    assert response.status_code == status, response.content
    body = response.json()["error"]
    assert body["code"] == code and body["message"]
    return body


@pytest.fixture
def refusal():
    user = UserFactory()
    client = _client(user)
    yield client
    # Nothing half-imported, and nothing of the upload kept.
    assert not ChatSession.objects.filter(owner=user).exists()
    assert not ImportJob.objects.filter(owner=user).exists()


def test_a_malformed_zip_is_refused(refusal):
    _refused(refusal, b"PK\x03\x04 this is not really a zip", 400, "invalid_import")
    _refused(refusal, b"neither zip nor json", 400, "invalid_import")
    _refused(refusal, _zip({"a.txt": b"x"}), 400, "invalid_import")  # no manifest


def test_an_unknown_format_version_is_refused(refusal):
    body = _refused(refusal, _zip({}, _manifest({}, version=99)), 400, "unsupported_version")
    assert body["details"]["supported"] == [1]


@pytest.mark.parametrize("name", ["../escape.txt", "/etc/passwd", "a/../../b", "C:/windows.txt"])
def test_paths_leaving_the_archive_are_refused(refusal, name):
    files = {name: b"x"}
    _refused(refusal, _zip(files, _manifest(files)), 400, "unsafe_archive")


def test_a_zip_bomb_is_refused_before_it_is_unpacked(refusal, settings):
    settings.IMPORT_MAX_UNCOMPRESSED_BYTES = 1024 * 1024
    files = {"sessions.jsonl": b"\n" * (2 * 1024 * 1024)}  # compresses to a few kilobytes
    data = _zip(files, _manifest(files))
    assert len(data) < 20_000
    _refused(refusal, data, 400, "unsafe_archive")


def test_a_changed_file_is_refused_by_its_checksum(refusal):
    owner = UserFactory()
    _library(owner)
    original = zipfile.ZipFile(io.BytesIO(_export(_client(owner))))
    files = {name: original.read(name) for name in original.namelist() if name != "manifest.json"}
    manifest = json.loads(original.read("manifest.json"))
    files["messages.jsonl"] = files["messages.jsonl"].replace(b"Lisbon", b"Berlin")
    _refused(refusal, _zip(files, manifest), 400, "checksum_mismatch")


def test_a_bad_record_rolls_the_whole_import_back():
    user = UserFactory()
    files = {
        "sessions.jsonl": b'{"id": "s1", "title": "Kept?"}\n',
        "messages.jsonl": b'{"id": 1, "session_id": "s1", "seq": 1, "role": "wizard", "content": "hi"}\n',
    }
    response = _import(_client(user), _zip(files, _manifest(files)))
    assert response.status_code == 400 and "role" in response.json()["error"]["message"]
    assert not ChatSession.objects.filter(owner=user).exists()
    assert ImportJob.objects.get(owner=user).state == "failed"


def test_an_oversized_upload_is_refused(refusal, settings):
    settings.IMPORT_MAX_BYTES = 2048
    _refused(refusal, b"x" * 4096, 413, "import_too_large")
