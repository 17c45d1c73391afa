"""Reading each format by its own headings, and refusing bad files with a reason a person can act on."""

import pytest

from documents_app.parsing import ParseError, parse
from tests.documents_app import files
from tests.samples import MARKDOWN


def test_markdown_sections_follow_its_headings():
    parsed = parse(MARKDOWN, "guide.md")
    assert parsed.media_type == "text/markdown" and parsed.title == "Warranty guide"
    assert [(b.level, b.title) for b in parsed.blocks] == [
        (0, ""),
        (1, "Warranty guide"),
        (2, "Coverage"),
        (2, "Claims"),
    ]
    assert "code block with # not a heading" in parsed.blocks[2].text


def test_plain_text_is_one_block_titled_by_its_name():
    parsed = parse(b"Just some notes.\n\nSecond paragraph.", "notes.txt")
    assert parsed.title == "Notes" and parsed.blocks[0].text == "Just some notes.\n\nSecond paragraph."


def test_html_headings_make_sections_and_scripts_are_dropped():
    html = b"""<!doctype html><html><head><title>Release notes</title><style>p{color:red}</style></head>
    <body><script>alert('x'); document.write('evil')</script>
    <h1>Version 2</h1><p>New export formats.</p><noscript>enable js</noscript>
    <h2>Fixes</h2><ul><li>Timeouts on large uploads</li><li>Login loop</li></ul>
    <!-- a comment --></body></html>"""
    parsed = parse(html, "notes.html")
    assert parsed.title == "Release notes"
    assert [(b.level, b.title) for b in parsed.blocks if b.text] == [(1, "Version 2"), (2, "Fixes")]
    text = " ".join(b.text for b in parsed.blocks)
    assert "alert" not in text and "evil" not in text and "color:red" not in text and "enable js" not in text
    assert "comment" not in text
    assert "Timeouts on large uploads\n" in parsed.blocks[-1].text + "\n"


def test_a_pdf_outline_gives_its_sections():
    data = files.pdf(
        ["Preface text.", "Chapter one text.", "More of chapter one.", "Chapter two text."],
        outline=[("Chapter 1", 0, 1), ("Chapter 2", 0, 3)],
        title="The Manual",
    )
    parsed = parse(data, "manual.pdf")
    assert parsed.media_type == "application/pdf" and parsed.title == "The Manual"
    assert [(b.level, b.title) for b in parsed.blocks] == [(0, ""), (1, "Chapter 1"), (1, "Chapter 2")]
    assert "Chapter one text." in parsed.blocks[1].text and "More of chapter one." in parsed.blocks[1].text


def test_a_pdf_without_an_outline_is_read_in_page_groups():
    parsed = parse(files.pdf([f"Page {i} says something." for i in range(1, 24)]), "report.pdf")
    assert [b.title for b in parsed.blocks] == ["Pages 1-10", "Pages 11-20", "Pages 21-23"]


def test_docx_heading_styles_and_tables_are_read():
    data = files.docx(
        [
            ("Title", "Onboarding"),
            ("Heading 1", "First week"),
            ("Normal", "Meet the team."),
            ("Heading 2", "Accounts"),
            ("Normal", "Ask IT for a laptop."),
        ],
        table=[["System", "Owner"], ["VPN", "IT"]],
    )
    parsed = parse(data, "onboarding.docx")
    assert parsed.title == "Onboarding"
    assert [(b.level, b.title) for b in parsed.blocks if b.text] == [(1, "First week"), (2, "Accounts")]
    assert "VPN | IT" in parsed.blocks[-1].text


@pytest.mark.parametrize(
    ("data", "name", "reason"),
    [
        (b"", "empty.txt", "The file is empty."),
        (b"", "empty.pdf", "The file is empty."),
        (b"   \n\n  ", "blank.txt", "no text to index"),
        (files.pdf_without_text(), "scan.pdf", "a scanned PDF without a text layer"),
        (b"%PDF-1.7\nthis is not really a pdf", "broken.pdf", "The PDF is damaged"),
        (b"Just text pretending.", "report.pdf", "says PDF, but its content is plain text"),
        (files.docx([("Normal", "x")]), "letter.pdf", "says PDF, but its content is DOCX"),
        (b"PK\x03\x04 not a zip at all", "doc.docx", "damaged"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "image.png", "binary data of a type this product does not read"),
        (b"name,age\nann,3", "data.xlsx", "Files named *.xlsx are not supported"),
    ],
    ids=[
        "empty",
        "zero-byte-pdf",
        "blank",
        "no-text-layer",
        "corrupt-pdf",
        "lying-pdf",
        "docx-named-pdf",
        "corrupt-docx",
        "png",
        "unsupported",
    ],
)
def test_bad_files_are_refused_with_a_reason(data, name, reason):
    with pytest.raises(ParseError, match=reason.replace("(", r"\(").replace("*", r"\*")):
        parse(data, name)


def test_a_docx_zip_bomb_is_refused_before_it_is_unpacked():
    bomb = files.zip_bomb_docx()
    assert len(bomb) < 2 * 1024 * 1024
    with pytest.raises(ParseError, match="possible zip bomb"):
        parse(bomb, "bomb.docx")


def test_text_in_windows_1252_and_utf_16_is_read_right():
    assert parse("résumé du projet".encode("cp1252"), "notes.txt").blocks[0].text == "résumé du projet"
    assert parse("résumé du projet".encode("utf-16"), "notes.txt").blocks[0].text == "résumé du projet"


def test_odd_line_breaks_do_not_lose_markdown_text():
    parsed = parse(b"# A\n\nalpha text\x0cmore\n\n# B\n\nbeta text", "x.md")
    assert [(b.title, b.text) for b in parsed.blocks if b.title] == [("A", "alpha text\nmore"), ("B", "beta text")]


def test_deeply_nested_html_is_read():
    html = "<div>" * 5000 + "Deep text." + "</div>" * 5000 + "<p>After it.</p>"
    text = " ".join(b.text for b in parse(html.encode(), "deep.html").blocks)
    assert "Deep text." in text and "After it." in text


def test_text_with_nul_bytes_anywhere_is_refused_as_binary():
    with pytest.raises(ParseError, match="binary data"):
        parse(b"<p>fine</p>" + b"x" * 10_000 + b"\x00", "page.html")


def test_table_cells_stay_apart_in_html():
    html = b"<html><body><table><tr><th>Price</th><th>Qty</th></tr><tr><td>10</td><td>3</td></tr></table></body></html>"
    text = parse(html, "t.html").blocks[0].text
    assert "Price | Qty" in text and "10 | 3" in text


def test_a_password_protected_pdf_says_so():
    from pypdf import PdfReader, PdfWriter

    writer = PdfWriter(clone_from=PdfReader(__import__("io").BytesIO(files.pdf(["Secret text."]))))
    writer.encrypt(user_password="hunter2", owner_password="owner")
    buffer = __import__("io").BytesIO()
    writer.write(buffer)
    with pytest.raises(ParseError, match="encrypted with a password"):
        parse(buffer.getvalue(), "secret.pdf")
