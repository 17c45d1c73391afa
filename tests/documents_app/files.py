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
