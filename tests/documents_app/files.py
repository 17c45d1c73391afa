"""Documents made on the fly for tests: PDF (reportlab), DOCX (python-docx), and bad files."""

from __future__ import annotations

import io
import zipfile


def pdf(pages: list[str], *, outline: list[tuple[str, int, int]] | None = None, title: str = "") -> bytes:
    """A PDF with one page per text; ``outline`` is (title, level 0-based, page index) bookmarks."""
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    page = canvas.Canvas(buffer, pagesize=A4)
    if title:
        page.setTitle(title)
    marks = {index: [] for index in range(len(pages))}
    for number, (name, level, index) in enumerate(outline or []):
        marks[index].append((f"m{number}", name, level))
    for index, text in enumerate(pages):
        for key, name, level in marks[index]:
            page.bookmarkPage(key)
            page.addOutlineEntry(name, key, level=level)
        y = 800
        for line in text.splitlines() or [""]:
            page.drawString(50, y, line)
            y -= 14
        page.showPage()
    page.save()
    return buffer.getvalue()


def pdf_without_text(pages: int = 2) -> bytes:
    from reportlab.lib.pagesizes import A4
    from reportlab.pdfgen import canvas

    buffer = io.BytesIO()
    page = canvas.Canvas(buffer, pagesize=A4)
    for _ in range(pages):
        page.rect(50, 50, 400, 600, fill=1)  # a scan: shapes, no text layer
        page.showPage()
    page.save()
    return buffer.getvalue()


def docx(paragraphs: list[tuple[str, str]], *, table: list[list[str]] | None = None) -> bytes:
    """A DOCX of (style, text) paragraphs, e.g. ("Heading 1", "Intro"), ("Normal", "Text ...")."""
    import docx as python_docx

    document = python_docx.Document()
    for style, text in paragraphs:
        document.add_paragraph(text, style=style)
    if table:
        grid = document.add_table(rows=len(table), cols=len(table[0]))
        for r, row in enumerate(table):
            for c, value in enumerate(row):
                grid.cell(r, c).text = value
    buffer = io.BytesIO()
    document.save(buffer)
    return buffer.getvalue()


def zip_bomb_docx() -> bytes:
    """A valid-looking DOCX whose document.xml unpacks to 300 MB of zeros from a few hundred KB."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", compression=zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        archive.writestr("[Content_Types].xml", "<Types/>")
        with archive.open("word/document.xml", "w", force_zip64=True) as member:
            block = b"\0" * (1024 * 1024)
            for _ in range(300):
                member.write(block)
    return buffer.getvalue()


_DRAWING = b"BT /F1 12 Tf 72 720 Td (Recollect) Tj ET\n"
_FONT = b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"


def _stream(data: bytes, entries: bytes = b"") -> bytes:
    import zlib

    packed = zlib.compress(data, 9)
    return b"<< %s/Length %d /Filter /FlateDecode >>\nstream\n" % (entries, len(packed)) + packed + b"\nendstream"


def _pdf_of(objects: list[bytes], *, pages: int, page: bytes) -> bytes:
    """A PDF whose objects 1 and 2 are the catalog and page tree, then ``objects`` (3 on), then ``pages``
    copies of ``page``."""
    first = 3 + len(objects)
    kids = " ".join(f"{first + number} 0 R" for number in range(pages))
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        f"<< /Type /Pages /Kids [{kids}] /Count {pages} >>".encode(),
        *objects,
        *[page] * pages,
    ]
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offset for offset in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


def pdf_bomb(*, pages: int, stream_bytes: int) -> bytes:
    """A small PDF whose ``pages`` pages all draw one shared, highly compressed content stream that
    unpacks to about ``stream_bytes`` of text operators: cheap to upload, costly to read page by page."""
    content = _stream(_DRAWING * (stream_bytes // len(_DRAWING)))
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
    return _pdf_of([_FONT, content], pages=pages, page=page + b"/Contents 4 0 R >>")


def pdf_form_bomb(*, draws: int, form_bytes: int) -> bytes:
    """A one-page PDF whose tiny content stream draws, ``draws`` times, one form that unpacks to about
    ``form_bytes`` of text operators: text extraction reads the form again at every drawing."""
    entries = b"/Type /XObject /Subtype /Form /BBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> "
    form = _stream(_DRAWING * (form_bytes // len(_DRAWING)), entries)
    content = _stream(b"/X0 Do\n" * draws)
    page = b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
    page += b"/Resources << /Font << /F1 3 0 R >> /XObject << /X0 4 0 R >> >> /Contents 5 0 R >>"
    return _pdf_of([_FONT, form, content], pages=1, page=page)


def docx_styles_bomb(*, styles_bytes: int) -> bytes:
    """A DOCX of one short paragraph whose styles.xml is padded to ``styles_bytes`` with styles that
    compress well but not suspiciously so (under the ratio guard), so only a cap on every XML part stops it."""
    import random

    plain = docx([("Normal", "A short letter about the kettle.")])
    rng = random.Random(7)
    styles, size, number = [], 0, 0
    while size < styles_bytes:
        name = "".join(rng.choice("abcdefghij") for _ in range(12))
        entry = f'<w:style w:type="paragraph" w:styleId="S{number}{name}"><w:name w:val="{name}"/></w:style>'
        styles.append(entry)
        size += len(entry)
        number += 1
    namespace = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
    padded = f'<?xml version="1.0"?><w:styles xmlns:w="{namespace}">{"".join(styles)}</w:styles>'.encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(plain)) as source, zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            data = padded if info.filename == "word/styles.xml" else source.read(info.filename)
            target.writestr(info.filename, data)
    return buffer.getvalue()


def docx_with_part(name: str, data: bytes, *, content_type: str) -> bytes:
    """A short DOCX with one more part, ``name``, declared in [Content_Types].xml as ``content_type``."""
    plain = docx([("Normal", "A short letter about the kettle.")])
    buffer = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(plain)) as source, zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as target:
        for info in source.infolist():
            content = source.read(info.filename)
            if info.filename == "[Content_Types].xml":
                override = f'<Override PartName="/{name}" ContentType="{content_type}"/></Types>'
                content = content.replace(b"</Types>", override.encode())
            target.writestr(info.filename, content)
        target.writestr(name, data)
    return buffer.getvalue()
