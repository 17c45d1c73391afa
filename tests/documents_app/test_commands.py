"""The management commands that write say whose data they touch, and never pass over a file quietly:
``ingest`` needs ``--user``; ``reindex`` needs ``--user`` or an explicit ``--all-users``; every file or
document not ingested or indexed is named with its reason, and the exit status is then non-zero."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from documents_app import services
from documents_app.management.commands.ingest import EXIT_SOME_SKIPPED
from documents_app.management.commands.reindex import EXIT_SOME_FAILED
from documents_app.models import Document
from tests.factories import DocumentFactory, UserFactory
from tests.helpers import server_env
from tests.samples import MARKDOWN

pytestmark = pytest.mark.django_db

ROOT = Path(__file__).resolve().parents[2]


def _folder(tmp_path: Path) -> Path:
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.md").write_bytes(MARKDOWN)
    (tmp_path / "sub" / "b.txt").write_text("Second document about the pump maintenance schedule.")
    return tmp_path


def test_ingest_loads_a_folder_recursively_with_a_progress_bar(tmp_path, capsys):
    UserFactory(username="librarian")
    call_command("ingest", str(_folder(tmp_path)), "--user", "librarian")
    out = capsys.readouterr()
    assert out.out.strip() == "2 indexed"
    assert "2/2" in out.err and "not ingested" not in out.err
    assert Document.objects.filter(status="ready", owner__username="librarian").count() == 2
    call_command("ingest", str(tmp_path), "--user", "librarian")
    assert capsys.readouterr().out.strip() == "2 existing"


def test_ingest_names_every_file_it_passes_over_and_exits_non_zero(tmp_path, capsys, monkeypatch):
    UserFactory(username="librarian")
    folder = _folder(tmp_path)
    (folder / "sub" / "c.pdf").write_bytes(b"text pretending to be a pdf")
    (folder / "sub" / "picture.png").write_bytes(b"\x89PNG")
    (folder / "gone.md").symlink_to(folder / "nowhere.md")
    os.mkfifo(folder / "pipe.txt")
    (folder / "locked.md").write_text("A file this process may not read.")
    (folder / ".git").mkdir()
    (folder / ".git" / "HEAD.txt").write_text("ref")
    # Tests run as root, whom file modes do not stop: the refusal the system would give is given here.
    real_read = Path.read_bytes

    def read_bytes(path: Path) -> bytes:
        if path.name == "locked.md":
            raise PermissionError(13, "Permission denied", str(path))
        return real_read(path)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    with pytest.raises(CommandError) as refused:
        call_command("ingest", str(folder), "--user", "librarian")
    assert refused.value.returncode == EXIT_SOME_SKIPPED
    assert "5 of 7 files were not ingested" in str(refused.value)
    out = capsys.readouterr()
    assert out.out.strip() == "2 indexed, 1 refused, 1 unreadable, 3 skipped (1 hidden files and folders not looked at)"
    reasons = {
        line.split(": ", 2)[1]: line.split(": ", 2)[2] for line in out.err.splitlines() if "not ingested" in line
    }
    assert reasons[str(folder / "sub" / "picture.png")] == "not a type this product reads (.png)"
    assert reasons[str(folder / "gone.md")] == "a link to nothing"
    assert reasons[str(folder / "pipe.txt")] == "not a regular file"
    assert reasons[str(folder / "locked.md")] == "unreadable (Permission denied)"
    assert reasons[str(folder / "sub" / "c.pdf")].startswith("refused: ")
    assert Document.objects.count() == 2


def test_ingest_needs_a_user_and_a_real_one(tmp_path):
    UserFactory(username="admin")
    with pytest.raises(CommandError, match="--user"):
        call_command("ingest", str(_folder(tmp_path)))
    with pytest.raises(CommandError, match="No user named 'nobody'"):
        call_command("ingest", str(tmp_path), "--user", "nobody")
    assert not Document.objects.exists()


def _document(owner, name: str) -> Document:
    return DocumentFactory(owner=owner, title=name, filename=f"{name}.md", status=Document.Status.FAILED)


def test_reindex_needs_whose_documents(capsys):
    with pytest.raises(CommandError, match="one of the arguments --user --all-users is required"):
        call_command("reindex", "--not-ready")
    with pytest.raises(CommandError, match="not allowed with"):
        call_command("reindex", "--user", "someone", "--all-users")
    with pytest.raises(CommandError, match="No user named 'nobody'"):
        call_command("reindex", "--user", "nobody")


def test_reindex_touches_only_the_named_users_documents(capsys, monkeypatch):
    mine, theirs = UserFactory(username="mine"), UserFactory(username="theirs")
    _document(mine, "my-notes")
    _document(theirs, "their-notes")
    touched = []
    monkeypatch.setattr("documents_app.services.document_reindex", lambda *, document: touched.append(document.owner))
    call_command("reindex", "--user", "mine", "--not-ready", "--async")
    assert touched == [mine]
    assert capsys.readouterr().out.strip() == "1 queued (mine's documents, not ready)"
    call_command("reindex", "--all-users", "--not-ready", "--async")
    assert sorted(u.username for u in touched[1:]) == ["mine", "theirs"]


def test_reindex_names_every_failure_and_exits_non_zero(capsys):
    owner = UserFactory(username="mine")
    _document(owner, "never-uploaded")  # no file behind it: indexing it fails
    with pytest.raises(CommandError) as failed:
        call_command("reindex", "--user", "mine")
    assert failed.value.returncode == EXIT_SOME_FAILED
    out = capsys.readouterr()
    assert out.out.strip() == "0 ready, 1 failed (mine's documents)"
    assert "failed: never-uploaded (mine): " in out.err


@pytest.mark.django_db(transaction=True)
def test_the_exit_status_a_shell_sees(tmp_path):
    """As a script runs it, in its own process: a file passed over makes the status non-zero."""
    UserFactory(username="librarian")
    (tmp_path / "a.md").write_bytes(MARKDOWN)
    (tmp_path / "picture.png").write_bytes(b"\x89PNG")
    done = subprocess.run(
        [sys.executable, "manage.py", "ingest", str(tmp_path), "--user", "librarian"],
        cwd=ROOT,
        env=server_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == EXIT_SOME_SKIPPED, done.stderr
    assert done.stdout.strip() == "1 indexed, 1 skipped"
    assert f"not ingested: {tmp_path / 'picture.png'}: not a type this product reads (.png)" in done.stderr
    assert Document.objects.filter(owner__username="librarian", status="ready").count() == 1


def test_a_file_whose_indexing_crashes_is_reported_and_the_others_still_ingested(tmp_path, capsys, monkeypatch):
    UserFactory(username="librarian")
    folder = _folder(tmp_path)
    real_index = services.document_index

    def index(*, document_id):
        if Document.objects.get(pk=document_id).filename == "a.md":
            raise IndexError("list index out of range")
        return real_index(document_id=document_id)

    monkeypatch.setattr(services, "document_index", index)
    with pytest.raises(CommandError) as failed:
        call_command("ingest", str(folder), "--user", "librarian")
    assert failed.value.returncode == EXIT_SOME_SKIPPED
    out = capsys.readouterr()
    assert out.out.strip() == "1 indexed, 1 failed"
    assert f"not ingested: {folder / 'a.md'}: failed to index: IndexError: list index out of range" in out.err
    crashed = Document.objects.get(filename="a.md")
    assert crashed.status == Document.Status.FAILED
    assert "list index out of range" in crashed.error
