"""An upload when a disk is full: a 503 in the contract's error shape (code ``storage_full``; the same
upload succeeds once space is freed, so it is not the request's fault), and nothing half-made left
behind: no partial file, no file without its row, no row. A full disk cannot be made safely in a test,
so the write fails the way the OS or PostgreSQL reports it (ENOSPC, SQLSTATE 53100) midway."""

from __future__ import annotations

import errno

import psycopg
import pytest
from django.core.files.base import ContentFile
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.files.uploadhandler import TemporaryFileUploadHandler
from django.db import OperationalError

from documents_app.models import Document
from tests.samples import KETTLE

pytestmark = pytest.mark.django_db


@pytest.fixture
def media(settings, tmp_path):
    settings.MEDIA_ROOT = tmp_path
    return tmp_path


def _upload(client):
    return client.post("/api/documents/upload", {"file": SimpleUploadedFile("kettle.md", KETTLE)}, format="multipart")


def _files(media) -> list:
    return [path for path in media.rglob("*") if path.is_file()]


def _assert_storage_full(response) -> None:
    assert response.status_code == 503
    body = response.json()
    assert body["error"]["code"] == "storage_full"
    assert set(body["error"]) == {"code", "message", "details"}


def test_a_disk_that_fills_up_midway_through_the_file_leaves_nothing(auth_client, media, monkeypatch):
    def chunks_until_full(self, chunk_size=None):
        self.seek(0)
        yield self.read(100)  # part of the file reaches the disk
        raise OSError(errno.ENOSPC, "No space left on device")

    with monkeypatch.context() as patched:
        patched.setattr(ContentFile, "chunks", chunks_until_full)
        _assert_storage_full(_upload(auth_client))
    assert not Document.objects.exists()
    assert _files(media) == []
    # Space freed: the same upload goes through, with nothing of the failed one in its way.
    assert _upload(auth_client).status_code == 202
    assert Document.objects.count() == 1 and len(_files(media)) == 1


def test_a_database_whose_disk_is_full_leaves_no_file_without_its_row(auth_client, media, monkeypatch):
    def disk_full(self, *args, **kwargs):
        try:
            raise psycopg.errors.DiskFull("could not extend file: No space left on device")
        except psycopg.errors.DiskFull as exc:
            raise OperationalError(str(exc)) from exc

    monkeypatch.setattr(Document, "save", disk_full)
    _assert_storage_full(_upload(auth_client))
    assert _files(media) == []


def test_a_full_disk_while_the_upload_is_spooled_is_a_503_too(auth_client, media, settings, monkeypatch):
    settings.FILE_UPLOAD_MAX_MEMORY_SIZE = 0  # every upload is spooled to a temporary file first

    def full(self, raw_data, start):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(TemporaryFileUploadHandler, "receive_data_chunk", full)
    _assert_storage_full(_upload(auth_client))
    assert not Document.objects.exists()
