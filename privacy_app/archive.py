"""Reading an uploaded import safely: an export zip checked whole before anything is written (its
member names, its unpacked size, its format version, every file's SHA-256), or a plain OpenAI-format
message list. Every problem is an ``InvalidInputError`` (400) or ``TooLargeError`` (413) that says
which file and what is wrong."""

from __future__ import annotations

import hashlib
import io
import json
import stat
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import PurePosixPath
from typing import IO, Any

from django.conf import settings
from django.utils.dateparse import parse_datetime

from foundation.exceptions import InvalidInputError, TooLargeError
from privacy_app.exports import EXPORT_FORMAT, EXPORT_VERSION, MANIFEST_NAME, RECORD_FILES

SUPPORTED_VERSIONS = frozenset({EXPORT_VERSION})
ZIP_MAGIC = b"PK"
READ_CHUNK_BYTES = 1024 * 1024
# Roles of an OpenAI-format list and what each becomes here; the rest (tools' results) are left out.
OPENAI_ROLES = {"user": "user", "assistant": "assistant", "system": "system", "developer": "system"}
TITLE_CHARS = 80


class ImportInvalid(InvalidInputError):
    code = "invalid_import"
    default_message = "The file is not a Recollect export or an OpenAI-format message list."


class UnsafeArchive(InvalidInputError):
    code = "unsafe_archive"
    default_message = "The archive holds paths or sizes that are refused."


class UnsupportedVersion(InvalidInputError):
    code = "unsupported_version"
    default_message = "This export's format version is not one this server reads."


class ChecksumMismatch(InvalidInputError):
    code = "checksum_mismatch"
    default_message = "A file of the archive does not match the SHA-256 its manifest gives."


class ImportTooLarge(TooLargeError):
    code = "import_too_large"
    default_message = "The import is larger than IMPORT_MAX_BYTES."


def check_upload_size(size: int) -> None:
    if size > settings.IMPORT_MAX_BYTES:
        raise ImportTooLarge(
            f"The file is {size} bytes; the limit is {settings.IMPORT_MAX_BYTES} (IMPORT_MAX_BYTES).",
            details={"limit_bytes": settings.IMPORT_MAX_BYTES},
        )


def _unsafe_name(info: zipfile.ZipInfo) -> str | None:
    name = info.filename
    if not name or name.startswith("/") or "\\" in name or "\x00" in name or (len(name) > 1 and name[1] == ":"):
        return "an absolute or malformed path"
    if ".." in PurePosixPath(name).parts:
        return "a path leaving the archive"
    if stat.S_ISLNK(info.external_attr >> 16):
        return "a symbolic link"
    return None


class ExportArchive:
    """An export zip, its manifest read and its members checked (names, count, unpacked size)."""

    def __init__(self, source: IO[bytes]) -> None:
        try:
            self.zip = zipfile.ZipFile(source)
            infos = self.zip.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, ValueError, EOFError) as exc:
            raise ImportInvalid(f"The file is not a readable zip archive ({exc}).") from exc
        self.members = self._checked_members(infos)
        self.manifest = self._manifest()
        self.files: dict[str, dict] = self.manifest["files"]

    def _checked_members(self, infos: list[zipfile.ZipInfo]) -> dict[str, zipfile.ZipInfo]:
        if len(infos) > settings.IMPORT_MAX_ENTRIES:
            raise UnsafeArchive(f"The archive holds {len(infos)} files; the limit is {settings.IMPORT_MAX_ENTRIES}.")
        members: dict[str, zipfile.ZipInfo] = {}
        unpacked = 0
        for info in infos:
            problem = _unsafe_name(info)
            if problem:
                raise UnsafeArchive(f"{info.filename!r} is {problem}.", details={"member": info.filename})
            if info.filename in members:
                raise UnsafeArchive(f"{info.filename!r} appears twice.", details={"member": info.filename})
            members[info.filename] = info
            # The sizes the zip declares bound what reading gives (a member that unpacks to more fails
            # its check), so their sum stops a zip bomb before a byte of it is unpacked.
            unpacked += info.file_size
        if unpacked > settings.IMPORT_MAX_UNCOMPRESSED_BYTES:
            raise UnsafeArchive(
                f"The archive unpacks to {unpacked} bytes; the limit is {settings.IMPORT_MAX_UNCOMPRESSED_BYTES} "
                "(IMPORT_MAX_UNCOMPRESSED_BYTES).",
                details={"limit_bytes": settings.IMPORT_MAX_UNCOMPRESSED_BYTES},
            )
        return members

    def _manifest(self) -> dict[str, Any]:
        if MANIFEST_NAME not in self.members:
            raise ImportInvalid(f"The archive has no {MANIFEST_NAME}: it is not a Recollect export.")
        try:
            manifest = json.loads(self.read(MANIFEST_NAME))
        except (ValueError, UnicodeDecodeError) as exc:
            raise ImportInvalid(f"{MANIFEST_NAME} is not valid JSON ({exc}).") from exc
        if not isinstance(manifest, dict) or manifest.get("format") != EXPORT_FORMAT:
            raise ImportInvalid(f"{MANIFEST_NAME} does not name the format {EXPORT_FORMAT!r}.")
        if manifest.get("version") not in SUPPORTED_VERSIONS:
            raise UnsupportedVersion(
                f"The export is format version {manifest.get('version')!r}; this server reads "
                f"{', '.join(str(v) for v in sorted(SUPPORTED_VERSIONS))}.",
                details={"version": manifest.get("version"), "supported": sorted(SUPPORTED_VERSIONS)},
            )
        files, source = manifest.get("files"), manifest.get("source")
        if not isinstance(files, dict) or not isinstance(source, dict) or not isinstance(source.get("id"), str):
            raise ImportInvalid(f"{MANIFEST_NAME} lacks its list of files or its source.")
        for name, entry in files.items():
            if name not in self.members:
                raise ImportInvalid(f"{name!r} is listed in {MANIFEST_NAME} but not in the archive.")
            if not isinstance(entry, dict) or not isinstance(entry.get("sha256"), str):
                raise ImportInvalid(f"{MANIFEST_NAME} gives no sha256 for {name!r}.")
        unlisted = sorted(set(self.members) - set(files) - {MANIFEST_NAME})
        if unlisted:
            raise ImportInvalid(f"{unlisted[0]!r} is in the archive but not in {MANIFEST_NAME}.")
        return manifest

    def _chunks(self, name: str) -> Iterator[bytes]:
        try:
            with self.zip.open(self.members[name]) as member:
                while chunk := member.read(READ_CHUNK_BYTES):
                    yield chunk
        except (zipfile.BadZipFile, OSError, EOFError, NotImplementedError, ValueError) as exc:
            raise ImportInvalid(f"{name!r} cannot be unpacked ({exc}).", details={"member": name}) from exc

    def read(self, name: str) -> bytes:
        return b"".join(self._chunks(name))

    def verify(self) -> None:
        """Every listed file against its SHA-256, before anything is imported."""
        for name, entry in self.files.items():
            digest = hashlib.sha256()
            for chunk in self._chunks(name):
                digest.update(chunk)
            if digest.hexdigest() != entry["sha256"].lower():
                raise ChecksumMismatch(
                    f"{name!r} does not match the SHA-256 in {MANIFEST_NAME}: the archive is damaged or was changed.",
                    details={"member": name},
                )

    @property
    def source(self) -> str:
        return self.manifest["source"]["id"][:128]

    def totals(self) -> dict[str, int]:
        counts = self.manifest.get("counts") or {}
        return {kind: int(counts.get(kind) or 0) for kind in RECORD_FILES}

    def records(self, kind: str) -> Iterator[tuple[int, dict]]:
        """The records of one kind, one at a time, with their line numbers."""
        name = RECORD_FILES[kind]
        if name not in self.files:
            return
        with self.zip.open(self.members[name]) as member:
            for number, line in enumerate(io.TextIOWrapper(member, encoding="utf-8"), start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except ValueError as exc:
                    raise ImportInvalid(f"{name} line {number} is not JSON ({exc}).") from exc
                if not isinstance(record, dict):
                    raise ImportInvalid(f"{name} line {number} is not an object.")
                yield number, record


@dataclass
class Record:
    """A record's fields, each read with its expected type; a wrong one names the file and line."""

    data: dict
    where: str

    def _fail(self, key: str, expected: str):
        raise ImportInvalid(f"{self.where}: {key!r} must be {expected}.", details={"field": key})

    def text(self, key: str, default: str = "", *, limit: int | None = None, required: bool = False) -> str:
        value = self.data.get(key)
        if value is None and not required:
            return default
        if not isinstance(value, str) or "\x00" in value:
            self._fail(key, "a string")
        return value[:limit] if limit else value

    def integer(self, key: str, default: int | None = None) -> int:
        value = self.data.get(key, default)
        if not isinstance(value, int) or isinstance(value, bool) or value < 0:
            self._fail(key, "a whole number of 0 or more")
        return value

    def when(self, key: str) -> datetime | None:
        value = self.data.get(key)
        if value is None:
            return None
        parsed = parse_datetime(value) if isinstance(value, str) else None
        if parsed is None:
            self._fail(key, "an ISO 8601 date and time")
        return parsed

    def obj(self, key: str) -> dict:
        value = self.data.get(key) or {}
        if not isinstance(value, dict):
            self._fail(key, "an object")
        return value

    def items(self, key: str) -> list:
        value = self.data.get(key) or []
        if not isinstance(value, list):
            self._fail(key, "a list")
        return value

    def stable_id(self) -> str:
        value = self.data.get("id")
        if isinstance(value, bool) or not isinstance(value, str | int) or value == "":
            self._fail("id", "a string or a number")
        return str(value)


@dataclass(frozen=True)
class Turn:
    role: str
    content: str
    created_at: datetime | None
    metadata: dict


def _content_text(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # content parts: the text ones, in order
        texts = [part.get("text") for part in content if isinstance(part, dict) and part.get("type") == "text"]
        return "\n".join(text for text in texts if isinstance(text, str))
    return None


def message_list(data: bytes) -> tuple[str, list[Turn]]:
    """A conversation given as OpenAI-format messages (``[{"role", "content"}...]`` or ``{"messages":
    [...], "title"?}``): its title and its turns. Tools' messages are left out."""
    try:
        parsed = json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise ImportInvalid("The file is neither a zip archive nor JSON.") from exc
    title = ""
    if isinstance(parsed, dict):
        title = parsed.get("title") if isinstance(parsed.get("title"), str) else ""
        parsed = parsed.get("messages")
    if not isinstance(parsed, list) or not parsed:
        raise ImportInvalid('A message list must be [{"role", "content"}...] or {"messages": [...]}, not empty.')
    turns = [turn for index, item in enumerate(parsed) if (turn := _turn(item, index)) is not None]
    if not turns:
        raise ImportInvalid("The message list has no user, assistant or system message.")
    if not title:
        first = next((turn.content for turn in turns if turn.role == "user"), turns[0].content)
        title = " ".join(first.split())[:TITLE_CHARS]
    return title[:255], turns


def _turn(item: Any, index: int) -> Turn | None:
    where = f"messages[{index}]"
    if not isinstance(item, dict):
        raise ImportInvalid(f"{where} is not an object.")
    role = item.get("role")
    if role in ("tool", "function"):
        return None
    if role not in OPENAI_ROLES:
        raise ImportInvalid(f"{where}.role must be one of {', '.join(OPENAI_ROLES)}.", details={"index": index})
    content = _content_text(item.get("content"))
    if content is None or "\x00" in content:
        raise ImportInvalid(f"{where}.content must be text or a list of text parts.", details={"index": index})
    if len(content) > settings.MESSAGE_MAX_CHARS:
        raise ImportInvalid(f"{where}.content is over MESSAGE_MAX_CHARS.", details={"index": index})
    record = Record(item, where)
    metadata = dict(record.obj("metadata"))
    if isinstance(item.get("name"), str):
        metadata.setdefault("speaker", item["name"][:100])
    return Turn(role=OPENAI_ROLES[role], content=content, created_at=record.when("created_at"), metadata=metadata)


def is_zip(head: bytes) -> bool:
    return head.startswith(ZIP_MAGIC)
