"""From uploaded bytes to a document's text, organised by its own headings.

A file's real type is told from its bytes, not its name: a name that claims another type than the
content has is refused. Each format is read by a well-kept library: markdown-it-py for Markdown,
Beautiful Soup for HTML, pypdf for PDF and python-docx for DOCX. The result is a flat list of blocks
(a heading and the text under it, up to the next heading), which ``documents_app.tree`` nests.
"""

from __future__ import annotations

import importlib
import io
import itertools
import re
import zipfile
from collections import Counter
from dataclasses import dataclass
from pathlib import PurePosixPath

from documents_app import titles

# Limits on what a DOCX (a zip) may unpack to, so a small upload cannot expand into gigabytes.
MAX_UNZIPPED_BYTES = 200 * 1024 * 1024
MAX_COMPRESSION_RATIO = 150
PDF_PAGES_PER_GROUP = 10
MB = 1024 * 1024


@dataclass(frozen=True)
class Limits:
    """What reading one file may cost, checked on the sizes the file declares before anything is expanded.

    A PDF's text is drawn by each page's content stream, and reading a page costs about a second of CPU per
    megabyte of it (measured with pypdf 7: 2 MB in 1.7 s); pages may share one stream, so the cost is pages x
    the bytes each page draws, not the file's size. A DOCX's XML parts are each parsed by lxml, which holds
    about ten times their size in memory (a 20 MB styles.xml: 280 MB). The defaults pass a dense
    2,000-page book and a 1,000-page report; settings (``DOCUMENT_*``) may change them.
    """

    pdf_max_pages: int = 5000
    # Pages x the bytes of the content streams each draws: 32 MB is about 1,000 dense pages of 32 KB.
    pdf_max_content_bytes: int = 32 * MB
    # The text of any document: 10 million characters is about 5,000 pages of prose.
    max_text_chars: int = 10_000_000
    docx_max_xml_bytes: int = 48 * MB  # all XML parts together, word/document.xml (the body) included
    docx_max_part_xml_bytes: int = 8 * MB  # any other XML part (styles, numbering, notes, headers ...)


DEFAULT_LIMITS = Limits()


class ParseError(ValueError):
    """The file cannot be read as the document it claims to be; the message says why, for a person."""


@dataclass(frozen=True)
class Block:
    """A heading (level 1-6; 0 for text before any heading) and the text under it. ``made_up`` marks a
    heading the reader gave a document that has none ("Pages 1-10" of a PDF without an outline)."""

    level: int
    title: str
    text: str
    made_up: bool = False


@dataclass(frozen=True)
class Parsed:
    media_type: str
    title: str  # what to call the document when its uploader gave no title (see ``titles``)
    blocks: list[Block]

    @property
    def text_length(self) -> int:
        return sum(len(block.text) for block in self.blocks)


FORMATS = {
    "text/plain": ("plain text", {".txt", ".text", ".log", ".csv", ""}),
    "text/markdown": ("Markdown", {".md", ".markdown", ".mdown", ".mkd"}),
    "text/html": ("HTML", {".html", ".htm", ".xhtml"}),
    "application/pdf": ("PDF", {".pdf"}),
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document": ("DOCX", {".docx"}),
}
_TEXT_EXTENSIONS = {".txt", ".text", ".log", ".csv", ".md", ".markdown", ".mdown", ".mkd", ".html", ".htm", ".xhtml"}


def _decode(data: bytes) -> str | None:
    """Text from bytes: UTF-16 only with its byte-order mark, else UTF-8, else Windows-1252; None for
    binary data (NUL bytes outside UTF-16)."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError:
            return None
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252", errors="replace")


def sniff(data: bytes) -> str:
    """The media type the bytes really are, or ParseError for a format this product does not read."""
    if data.startswith(b"%PDF-"):
        return "application/pdf"
    if data.startswith(b"PK\x03\x04"):
        try:
            with zipfile.ZipFile(io.BytesIO(data)) as archive:
                if "word/document.xml" in archive.namelist():
                    return "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
        except zipfile.BadZipFile as exc:
            raise ParseError("The file looks like a zip archive but is damaged.") from exc
        raise ParseError(
            "The file is a zip archive, not a document this product reads (PDF, DOCX, HTML, Markdown, text)."
        )
    text = _decode(data)
    if text is None:
        raise ParseError(
            "The file is binary data of a type this product does not read (PDF, DOCX, HTML, Markdown, text)."
        )
    head = text[:2048].lstrip().lower()
    if head.startswith(("<!doctype html", "<html")) or re.search(r"<(?:html|body|head)[\s>]", head):
        return "text/html"
    return "text/plain"  # Markdown is plain text; the name decides whether its headings are read


# The libraries the readers below import when first used (so a web process that only sniffs uploads
# never loads them); ``preload`` loads them ahead, for a process that forks one reader per file.
READER_LIBRARIES = ("markdown_it", "bs4", "lxml.etree", "pypdf", "pypdf.generic", "docx", "docx.opc.exceptions")


def preload() -> None:
    for name in READER_LIBRARIES:
        importlib.import_module(name)


def detect(data: bytes, filename: str) -> str:
    """The media type to parse ``data`` as, checking that ``filename`` does not claim another one."""
    if not data:
        raise ParseError("The file is empty.")
    extension = PurePosixPath(filename.lower()).suffix
    actual = sniff(data)
    if actual == "text/plain":
        if extension in FORMATS["text/markdown"][1]:
            return "text/markdown"
        if extension in FORMATS["text/html"][1]:
            return "text/html"  # HTML without <html>: a fragment, still HTML
    claimed = next((media for media, (_, extensions) in FORMATS.items() if extension in extensions), None)
    if claimed is None and extension not in _TEXT_EXTENSIONS:
        names = ", ".join(sorted({name for name, _ in FORMATS.values()}))
        raise ParseError(f"Files named *{extension} are not supported; upload one of: {names}.")
    if claimed is not None and claimed != actual and not (claimed.startswith("text/") and actual.startswith("text/")):
        raise ParseError(
            f"The file is named {filename!r}, which says {FORMATS[claimed][0]}, but its content is "
            f"{FORMATS[actual][0]}."
        )
    return actual


def parse(data: bytes, filename: str, *, limits: Limits = DEFAULT_LIMITS) -> Parsed:
    """Reads ``data`` as the document it is. Raises ParseError with a reason a person can act on, also
    for a file over one of ``limits``."""
    media_type = detect(data, filename)
    reader = {
        "text/plain": _plain,
        "text/markdown": _markdown,
        "text/html": _html,
        "application/pdf": _pdf,
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document": _docx,
    }[media_type]
    own_title, blocks = reader(data, limits)
    _check_text(sum(len(block.text) for block in blocks), limits)
    blocks = [Block(b.level, _squash(b.title), _tidy(b.text), b.made_up) for b in blocks]
    blocks = [b for b in blocks if b.text or b.title]
    if not any(b.text for b in blocks):
        raise ParseError(
            "The file has no text to index"
            + (" (a scanned PDF without a text layer?)." if media_type == "application/pdf" else ".")
        )
    headings = [(b.level, b.title) for b in blocks if b.level and b.title and not b.made_up]
    title = titles.document_title(own=own_title, headings=headings, filename=filename)
    return Parsed(media_type=media_type, title=title, blocks=blocks)


def _squash(text: str) -> str:
    return re.sub(r"\s+", " ", (text or "").replace("\x00", "")).strip()


def _newlines(text: str) -> str:
    """One kind of line break, so line numbers agree between libraries (form feeds, U+2028 ...)."""
    return re.sub(r"\r\n?|[\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029]", "\n", text)


def _tidy(text: str) -> str:
    """Keeps paragraphs apart, drops runs of blank lines, trailing spaces and NUL characters."""
    lines = [line.rstrip() for line in _newlines((text or "").replace("\x00", "")).split("\n")]
    return re.sub(r"\n{3,}", "\n\n", "\n".join(lines)).strip()


def _check_text(chars: int, limits: Limits) -> None:
    if chars > limits.max_text_chars:
        raise ParseError(
            f"The document has more than {limits.max_text_chars:,} characters of text, more than one document "
            "may hold here: split it into parts and upload those."
        )


def _plain(data: bytes, limits: Limits) -> tuple[str, list[Block]]:
    text = _decode(data) or ""
    return "", [Block(0, "", text)]


_FRONT_MATTER_END = re.compile(r"^(?:---|\.\.\.)\s*$")
_FRONT_MATTER_TITLE = re.compile(r"^title\s*:\s*(.*?)\s*$", re.IGNORECASE)
_YAML_FIELD = re.compile(r"^[A-Za-z_][\w -]*:(?:\s|$)")
FRONT_MATTER_MAX_LINES = 200


def _front_matter(lines: list[str]) -> tuple[str, int]:
    """The title in a YAML front matter block ("---" ... "---") opening the file, and how many lines
    the block takes (0 without one): it is metadata, not text, and not a heading either."""
    if not lines or lines[0].strip() != "---":
        return "", 0
    for end in range(1, min(len(lines), FRONT_MATTER_MAX_LINES)):
        if _FRONT_MATTER_END.match(lines[end]):
            if not any(_YAML_FIELD.match(line) for line in lines[1:end]):
                return "", 0  # a thematic break, then text: Markdown, not metadata
            fields = (_FRONT_MATTER_TITLE.match(line) for line in lines[1:end])
            title = next((match.group(1) for match in fields if match), "")
            return title.strip("'\"").strip(), end + 1
    return "", 0


def _inline_text(token) -> str:
    """A heading's words without their markup: "**Warranty** of `K2`" -> "Warranty of K2"."""
    words = [
        " " if child.type in ("softbreak", "hardbreak") else child.content
        for child in token.children or []
        if child.type in ("text", "code_inline", "image", "softbreak", "hardbreak")
    ]
    return "".join(words) if token.children else token.content


def _markdown(data: bytes, limits: Limits) -> tuple[str, list[Block]]:
    from markdown_it import MarkdownIt

    text = _newlines(_decode(data) or "")
    title, skip = _front_matter(text.split("\n"))
    # Blanked rather than cut, so that line numbers still match the file.
    lines = [""] * skip + text.split("\n")[skip:]
    text = "\n".join(lines)
    tokens = MarkdownIt("commonmark").parse(text)
    headings = []  # (first line, last line, level, title) of each heading
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and token.map:
            headings.append((token.map[0], token.map[1], int(token.tag[1]), _inline_text(tokens[index + 1])))
    blocks = [Block(0, "", "\n".join(lines[: headings[0][0]] if headings else lines))]
    for number, (_start, end, level, heading) in enumerate(headings):
        stop = headings[number + 1][0] if number + 1 < len(headings) else len(lines)
        blocks.append(Block(level, heading, "\n".join(lines[end:stop])))
    return title, blocks


_HTML_BLOCKS = {
    "p",
    "div",
    "li",
    "pre",
    "blockquote",
    "tr",
    "br",
    "section",
    "article",
    "table",
    "dd",
    "dt",
    "figcaption",
    "caption",
    "ul",
    "ol",
    "header",
    "footer",
    "main",
    "aside",
}


_HTML_CELLS = {"td", "th"}


def _html(data: bytes, limits: Limits) -> tuple[str, list[Block]]:
    from bs4 import BeautifulSoup, NavigableString, Tag

    soup = BeautifulSoup(data, "html.parser")
    title_tag = soup.find("title")
    title = title_tag.get_text(" ", strip=True) if title_tag else ""
    for hidden in soup(["script", "style", "noscript", "template", "iframe", "object", "svg", "head"]):
        hidden.decompose()
    blocks: list[Block] = []
    level, heading, parts = 0, "", []
    # Depth-first without recursion: deeply nested markup must not exhaust Python's stack.
    stack: list = [(soup, False)]
    while stack:
        node, closing = stack.pop()
        if closing:
            parts.append(" | " if node.name in _HTML_CELLS else "\n")
            continue
        if isinstance(node, NavigableString):
            if node.__class__.__name__ not in ("Comment", "Doctype", "CData", "ProcessingInstruction", "Declaration"):
                parts.append(str(node))
            continue
        if not isinstance(node, Tag):
            continue
        if re.fullmatch(r"h[1-6]", node.name or "") and node is not soup:
            blocks.append(Block(level, heading, "".join(parts)))
            level, heading, parts = int(node.name[1]), node.get_text(" ", strip=True), []
            continue
        if node.name in _HTML_BLOCKS or node.name in _HTML_CELLS:
            parts.append("\n" if node.name not in _HTML_CELLS else "")
            stack.append((node, True))
        stack.extend((child, False) for child in reversed(list(node.children)))
    blocks.append(Block(level, heading, "".join(parts)))
    return title, blocks


def _pdf(data: bytes, limits: Limits) -> tuple[str, list[Block]]:
    from pypdf import PdfReader
    from pypdf.errors import PdfReadError, PyPdfError

    try:
        reader = PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            try:
                opened = reader.decrypt("")
            except Exception as exc:  # any failure here means a password is needed
                raise ParseError("The PDF is encrypted with a password.") from exc
            if not opened:
                raise ParseError("The PDF is encrypted with a password.")
        _check_pdf_cost(reader, limits)
        pages, chars = [], 0
        for page in reader.pages:
            pages.append(page.extract_text() or "")
            chars += len(pages[-1])
            _check_text(chars, limits)  # stop reading as soon as it is over, not after the last page
        title = str((reader.metadata or {}).get("/Title") or "")
        outline = _pdf_outline(reader)
    except ParseError:
        raise
    except (PdfReadError, PyPdfError, ValueError, KeyError, TypeError, OSError) as exc:
        raise ParseError(f"The PDF is damaged and cannot be read ({exc}).") from exc
    if not pages:
        raise ParseError("The PDF has no pages.")
    if outline:
        return title, _outline_blocks(pages, outline)
    return title, [
        Block(
            1,
            f"Pages {start + 1}-{min(start + PDF_PAGES_PER_GROUP, len(pages))}",
            "\n".join(pages[start : start + PDF_PAGES_PER_GROUP]),
            made_up=True,
        )
        for start in range(0, len(pages), PDF_PAGES_PER_GROUP)
    ]


def _stream_parts(contents) -> list:
    """The streams a page's /Contents names, each with a key that is the same wherever it is shared."""
    from pypdf.generic import ArrayObject, IndirectObject

    if isinstance(contents, IndirectObject) and isinstance(contents.get_object(), ArrayObject):
        contents = contents.get_object()
    items = contents if isinstance(contents, ArrayObject) else [contents]
    return [(_key(item), item.get_object()) for item in items]


def _key(item) -> tuple | int:
    """The same for every reference to one PDF object."""
    from pypdf.generic import IndirectObject

    return (item.idnum, item.generation) if isinstance(item, IndirectObject) else id(item)


def _entry(dictionary, name: str):
    """A PDF dictionary's entry, followed if it is a reference; None if absent (or not a dictionary)."""
    from pypdf.generic import DictionaryObject

    if not isinstance(dictionary, DictionaryObject) or name not in dictionary:
        return None
    return dictionary[name]


# "/Name Do": drawing a form (or an image) by its name in the resources. Matched on the raw stream, so a
# string that happens to hold those words counts too, which only errs towards refusing.
_DRAW_XOBJECT = re.compile(rb"/([^\s/\[\]()<>{}%]+)\s*Do(?![^\s/\[\]()<>{}%])")
# Forms drawing forms deeper than this are refused: pypdf reads each level again.
PDF_MAX_FORM_DEPTH = 8


class _PdfCost:
    """The bytes extracting a PDF's text reads: each page's content streams, and for every form it draws
    ("/Name Do"), that form's streams, again at every drawing, forms within forms included. Each stream is
    unpacked once (pypdf stops any one stream at 75 MB) and remembered as its size and what it draws."""

    def __init__(self, limits: Limits) -> None:
        self.cap = limits.pdf_max_content_bytes
        self.streams: dict = {}  # key -> (size, {name: times drawn})
        self.forms: dict = {}  # key -> bytes read to draw the form once

    def _stream(self, key, stream) -> tuple[int, Counter]:
        from pypdf.errors import LimitReachedError

        if key not in self.streams:
            try:
                data = stream.get_data() if hasattr(stream, "get_data") else b""
            except LimitReachedError:  # one stream alone unpacks past what pypdf reads
                data, self.streams[key] = b"", (self.cap + 1, Counter())
            else:
                self.streams[key] = (len(data), Counter(m.group(1) for m in _DRAW_XOBJECT.finditer(data)))
        return self.streams[key]

    def drawn(self, parts: list, resources, depth: int = 0) -> int:
        """Bytes read to draw ``parts`` (keyed streams) with ``resources``; stops counting past the cap."""
        total, calls = 0, Counter()
        for key, stream in parts:
            size, names = self._stream(key, stream)
            total += size
            calls.update(names)
        xobjects = _entry(resources, "/XObject")
        for name, times in calls.items():
            if total > self.cap or xobjects is None:
                break
            entry = f"/{name.decode('latin-1')}"
            if entry in xobjects:
                ref = xobjects.raw_get(entry)
                total += times * self._form(ref, resources, depth + 1)
        return total

    def _form(self, ref, resources, depth: int) -> int:
        key = _key(ref)
        if key not in self.forms:
            if depth > PDF_MAX_FORM_DEPTH:
                return self.cap + 1
            self.forms[key] = 0  # a form that draws itself is counted once, not forever
            form = ref.get_object()
            if _entry(form, "/Subtype") == "/Form":
                own = _entry(form, "/Resources")
                self.forms[key] = self.drawn([(key, form)], own if own is not None else resources, depth)
        return self.forms[key]


def _check_pdf_cost(reader, limits: Limits) -> None:
    """Refuses a PDF whose pages together make text extraction read more bytes than ``limits`` allow
    (``_PdfCost``), before any page's text is extracted: pages sharing one huge content stream, or
    drawing one huge form many times, cost that much each time."""
    count = len(reader.pages)
    if count > limits.pdf_max_pages:
        raise ParseError(
            f"The PDF has {count:,} pages; at most {limits.pdf_max_pages:,} are read here. Split it into parts."
        )
    cost, total = _PdfCost(limits), 0
    for page in reader.pages:
        if "/Contents" in page:
            total += cost.drawn(_stream_parts(page.raw_get("/Contents")), _entry(page, "/Resources"))
        if total > limits.pdf_max_content_bytes:
            raise ParseError(
                f"The PDF's pages draw more than {limits.pdf_max_content_bytes // MB} MB of content (pages sharing "
                "one huge content stream or drawing one huge form many times?), more than is read here. If it is "
                "a real document, split it into parts or print it to a new PDF."
            )


def _heading_at(text: str, heading: str, start: int, end: int) -> re.Match | None:
    """Where a heading stands in ``text[start:end]``: at the start of a line if it is there, else anywhere."""
    words = heading.split()
    if not words:
        return None
    pattern = r"\s+".join(re.escape(word) for word in words)
    return re.compile(rf"(?m)^[ \t]*{pattern}", re.IGNORECASE).search(text, start, end) or re.compile(
        pattern, re.IGNORECASE
    ).search(text, start, end)


def _outline_blocks(pages: list[str], outline: list[tuple[int, str, int]]) -> list[Block]:
    """The PDF's own table of contents as blocks. Each entry's text runs from its heading, found on its
    page, to the next entry's, so that several headings on one page each keep their own text; an entry
    whose heading is not in the text starts at its page (or where the entry before it ended)."""
    text = "\n".join(pages)
    page_starts = list(itertools.accumulate((len(page) + 1 for page in pages[:-1]), initial=0))
    cuts: list[tuple[int, int]] = []  # per entry: where its heading starts, and where its text does
    floor = 0
    for _level, heading, page in outline:
        begin = max(floor, page_starts[page])
        found = _heading_at(text, heading, begin, page_starts[page] + len(pages[page]))
        cuts.append((found.start(), found.end()) if found else (begin, begin))
        floor = cuts[-1][1]
    blocks = [Block(0, "", text[: cuts[0][0]])] if cuts[0][0] > 0 else []
    for number, (level, heading, _page) in enumerate(outline):
        end = cuts[number + 1][0] if number + 1 < len(cuts) else len(text)
        blocks.append(Block(level, heading, text[cuts[number][1] : end]))
    return blocks


def _pdf_outline(reader) -> list[tuple[int, str, int]]:
    """(level, title, first page index) of each outline entry, in page order; [] if there is none."""
    entries: list[tuple[int, str, int]] = []

    def walk(items, depth: int) -> None:
        for item in items:
            if isinstance(item, list):
                walk(item, depth + 1)
                continue
            try:
                page = reader.get_destination_page_number(item)
            except Exception:  # noqa: S112 (a broken destination: skip that entry, keep the rest)
                continue
            if page is not None and page >= 0:
                entries.append((min(depth, 6), str(item.title), page))

    try:
        walk(reader.outline, 1)
    except Exception:  # a damaged outline: fall back to page groups
        return []
    return sorted(entries, key=lambda entry: entry[2])


def _docx(data: bytes, limits: Limits) -> tuple[str, list[Block]]:
    import docx
    from docx.opc.exceptions import PackageNotFoundError

    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        infos = archive.infolist()
        unzipped = sum(info.file_size for info in infos)
        packed = max(sum(info.compress_size for info in infos), 1)
        if unzipped > MAX_UNZIPPED_BYTES or unzipped / packed > MAX_COMPRESSION_RATIO:
            raise ParseError(
                f"The DOCX would unpack to {unzipped // MB} MB ({unzipped / packed:.0f} times its size): "
                "refused as a possible zip bomb."
            )
        _check_docx_parts(infos, _xml_content_types(archive, limits), limits)
    try:
        document = docx.Document(io.BytesIO(data))
    except (PackageNotFoundError, KeyError, ValueError, zipfile.BadZipFile) as exc:
        raise ParseError(f"The DOCX is damaged and cannot be read ({exc}).") from exc
    blocks: list[Block] = []
    level, heading, parts = 0, "", []
    title = str(document.core_properties.title or "")

    def body_elements(parent):
        # Content controls (w:sdt) wrap paragraphs and tables; read what they hold in place.
        for child in parent.iterchildren():
            if child.tag.rsplit("}", 1)[-1] == "sdt":
                for content in child.iterchildren():
                    if content.tag.rsplit("}", 1)[-1] == "sdtContent":
                        yield from body_elements(content)
            else:
                yield child

    styles: dict[str, str] = {}
    for child in body_elements(document.element.body):
        tag = child.tag.rsplit("}", 1)[-1]
        if tag == "p":
            paragraph = docx.text.paragraph.Paragraph(child, document)
            style_id = child.style or ""
            if style_id not in styles:  # python-docx looks a style up anew on every access
                styles[style_id] = (paragraph.style.name if paragraph.style is not None else "") or ""
            style = styles[style_id]
            match = re.match(r"(?i)heading\s*(\d)", style)
            if match or style.lower() == "title":
                blocks.append(Block(level, heading, "\n".join(parts)))
                heading_level = int(match.group(1)) if match else 1
                level, heading, parts = min(heading_level, 6), paragraph.text, []
                if style.lower() == "title" and titles.is_junk(title):
                    title = paragraph.text
            else:
                parts.append(paragraph.text)
        elif tag == "tbl":
            table = docx.table.Table(child, document)
            for row in table.rows:
                parts.append(" | ".join(cell.text.strip() for cell in row.cells))
    blocks.append(Block(level, heading, "\n".join(parts)))
    return title, blocks


_CONTENT_TYPES = "[Content_Types].xml"


def _xml_content_types(archive: zipfile.ZipFile, limits: Limits) -> tuple[set[str], set[str]]:
    """The extensions and the part names that the DOCX's [Content_Types].xml declares as XML: python-docx
    parses a part by its declared type, whatever its name (an XML part may be called "image.png")."""
    try:
        info = archive.getinfo(_CONTENT_TYPES)
    except KeyError:
        return set(), set()
    if info.file_size > limits.docx_max_part_xml_bytes:
        raise ParseError(f"The DOCX's {_CONTENT_TYPES} is {info.file_size / MB:.0f} MB: not a real document's.")
    from lxml import etree

    # As python-docx parses a part: no entities expanded, nothing fetched from the network.
    parser = etree.XMLParser(resolve_entities=False, no_network=True)
    try:
        root = etree.fromstring(archive.read(info), parser=parser)
    except (etree.XMLSyntaxError, zipfile.BadZipFile, ValueError) as exc:
        raise ParseError(f"The DOCX is damaged and cannot be read ({exc}).") from exc
    extensions, names = set(), set()
    for entry in root.iterchildren("*"):
        declared = entry.get("ContentType", "").split(";")[0].strip().lower()
        if not declared.endswith(("/xml", "+xml")):
            continue
        if entry.get("Extension"):
            extensions.add(entry.get("Extension").lower())
        if entry.get("PartName"):
            names.add(entry.get("PartName").lstrip("/").lower())
    return extensions, names


def _check_docx_parts(infos: list[zipfile.ZipInfo], declared: tuple[set[str], set[str]], limits: Limits) -> None:
    """Refuses a DOCX any of whose XML parts (all of which python-docx may parse) would unpack to more
    than ``limits`` allow, from the sizes the zip declares; zipfile stops reading a part at its declared
    size, so a part cannot lie its way past this. A part is XML by its name or by its declared type."""
    extensions, names = declared
    xml = [
        info
        for info in infos
        if info.filename.lower().endswith((".xml", ".rels"))
        or info.filename.lower() in names
        or PurePosixPath(info.filename.lower()).suffix.lstrip(".") in extensions
    ]
    for info in xml:
        body = info.filename == "word/document.xml"
        cap = limits.docx_max_xml_bytes if body else limits.docx_max_part_xml_bytes
        if info.file_size > cap:
            raise ParseError(
                f"The DOCX's part {info.filename} unpacks to {info.file_size / MB:.0f} MB, more than the "
                f"{cap // MB} MB read here"
                + (
                    ": split the document into parts."
                    if body
                    else " (a real document's is far smaller): save it again from a word processor, or as PDF."
                )
            )
    total = sum(info.file_size for info in xml)
    if total > limits.docx_max_xml_bytes:
        raise ParseError(
            f"The DOCX's XML unpacks to {total / MB:.0f} MB, more than the {limits.docx_max_xml_bytes // MB} MB read "
            "here: split the document into parts."
        )
