"""Reading a file cannot run away: what a file declares is capped before it is expanded (a PDF's pages x
content-stream bytes, a DOCX's every XML part, the text of any document), the reading process is held to
a CPU, memory and wall-clock budget, and what goes over any of them fails with a reason a person can act
on, quickly."""

import random
import time

import pytest

from documents_app import parsing, sandbox
from tests.documents_app import files

MB = parsing.MB
# Caps lifted, so that only the reading process's budget can stop a file.
NO_CAPS = parsing.Limits(
    pdf_max_pages=10**6,
    pdf_max_content_bytes=10**12,
    max_text_chars=10**12,
    docx_max_xml_bytes=10**12,
    docx_max_part_xml_bytes=10**12,
)
ROOMY = sandbox.Budget(cpu_s=30, wall_s=60, memory_bytes=1024 * MB)


def _refused(data: bytes, filename: str, limits: parsing.Limits = parsing.DEFAULT_LIMITS) -> tuple[str, float]:
    started = time.monotonic()
    with pytest.raises(parsing.ParseError) as refused:
        parsing.parse(data, filename, limits=limits)
    return str(refused.value), time.monotonic() - started


def test_a_pdf_whose_pages_share_one_huge_content_stream_is_refused_before_any_page_is_read():
    bomb = files.pdf_bomb(pages=20, stream_bytes=5 * MB)  # 100 MB of drawing from an 18 KB file
    assert len(bomb) < 20_000
    reason, seconds = _refused(bomb, "report.pdf")
    assert "draw more than 32 MB of content" in reason and "split it" in reason
    assert seconds < 2, "refused from the sizes, not after reading the pages"


def test_the_pdf_cap_counts_a_shared_stream_on_every_page_that_draws_it():
    limits = parsing.Limits(pdf_max_content_bytes=3 * MB)
    assert parsing.parse(files.pdf_bomb(pages=2, stream_bytes=1 * MB), "two.pdf", limits=limits).text_length > 0
    reason, _ = _refused(files.pdf_bomb(pages=4, stream_bytes=1 * MB), "four.pdf", limits)
    assert "more than 3 MB of content" in reason


def test_a_pdf_drawing_one_huge_form_many_times_is_refused_before_it_is_read():
    bomb = files.pdf_form_bomb(draws=400, form_bytes=100_000)  # 40 MB of drawing from 1 KB
    assert len(bomb) < 2000
    reason, seconds = _refused(bomb, "flyer.pdf")
    assert "draw more than 32 MB of content" in reason
    assert seconds < 1
    # The same form drawn a few times is a real document's letterhead, and is read.
    assert "Recollect" in parsing.parse(files.pdf_form_bomb(draws=3, form_bytes=10_000), "letter.pdf").blocks[0].text


def test_a_pdf_with_more_pages_than_allowed_is_refused():
    reason, _ = _refused(files.pdf(["page"] * 6), "long.pdf", parsing.Limits(pdf_max_pages=5))
    assert reason == "The PDF has 6 pages; at most 5 are read here. Split it into parts."


def test_a_real_pdf_and_docx_pass_the_default_caps():
    pages = [f"Chapter {n}\nThe kettle boils water in {n} minutes." for n in range(40)]
    assert "boils water in 39 minutes" in parsing.parse(files.pdf(pages), "manual.pdf").blocks[-1].text
    document = files.docx([("Heading 1", "Warranty"), ("Normal", "Two years, parts and labour.")])
    assert parsing.parse(document, "warranty.docx").blocks[-1].text == "Two years, parts and labour."


def test_a_docx_whose_styles_unpack_past_the_part_cap_is_refused_naming_the_part():
    bomb = files.docx_styles_bomb(styles_bytes=10 * MB)
    reason, seconds = _refused(bomb, "letter.docx")
    assert reason.startswith("The DOCX's part word/styles.xml unpacks to 10 MB, more than the 8 MB read here")
    assert seconds < 1


def test_a_docx_whose_xml_parts_together_pass_the_total_cap_is_refused():
    bomb = files.docx_styles_bomb(styles_bytes=3 * MB)
    limits = parsing.Limits(docx_max_xml_bytes=2 * MB, docx_max_part_xml_bytes=4 * MB)
    reason, _ = _refused(bomb, "letter.docx", limits)
    assert "XML unpacks to 3 MB, more than the 2 MB read here" in reason


def test_a_docx_xml_part_named_like_an_image_is_capped_as_xml_and_a_real_large_image_is_not():
    random_bytes = random.Random(5).randbytes(9 * MB)  # incompressible: no ratio guard trips
    header = "application/vnd.openxmlformats-officedocument.wordprocessingml.header+xml"
    disguised = files.docx_with_part("word/media/photo.png", random_bytes, content_type=header)
    reason, _ = _refused(disguised, "letter.docx")
    assert reason.startswith("The DOCX's part word/media/photo.png unpacks to 9 MB, more than the 8 MB read here")
    photo = files.docx_with_part("word/media/photo.png", random_bytes, content_type="image/png")
    assert parsing.parse(photo, "letter.docx").blocks[-1].text == "A short letter about the kettle."


def test_a_document_with_more_text_than_allowed_is_refused_whatever_its_format():
    limits = parsing.Limits(max_text_chars=1000)
    for data, name in [
        (b"word " * 300, "notes.txt"),
        (b"# Notes\n\n" + b"word " * 300, "notes.md"),
        (files.pdf(["word " * 60] * 5), "notes.pdf"),
    ]:
        reason, _ = _refused(data, name, limits)
        assert "more than 1,000 characters of text" in reason, name
    assert parsing.parse(b"word " * 100, "short.txt", limits=limits).text_length == 499


def test_the_isolated_reader_gives_what_reading_in_process_gives():
    data = files.pdf(["Intro\nThe kettle.", "Care\nDescale monthly."], outline=[("Care", 0, 1)], title="K3")
    assert sandbox.parse_isolated(data, "k3.pdf", limits=parsing.DEFAULT_LIMITS, budget=ROOMY) == parsing.parse(
        data, "k3.pdf"
    )


def test_the_isolated_reader_passes_on_the_reason_a_file_is_refused():
    with pytest.raises(parsing.ParseError, match="draw more than 32 MB"):
        sandbox.parse_isolated(
            files.pdf_bomb(pages=20, stream_bytes=5 * MB), "x.pdf", limits=parsing.DEFAULT_LIMITS, budget=ROOMY
        )


def test_a_file_that_needs_more_cpu_than_the_budget_is_stopped_by_the_system():
    budget = sandbox.Budget(cpu_s=1, wall_s=30, memory_bytes=1024 * MB)
    started = time.monotonic()
    with pytest.raises(parsing.ParseError) as stopped:
        sandbox.parse_isolated(files.pdf_bomb(pages=8, stream_bytes=2 * MB), "x.pdf", limits=NO_CAPS, budget=budget)
    assert str(stopped.value).startswith("Reading the file took more than 1 s of computing time.")
    assert time.monotonic() - started < 10


def test_a_file_that_needs_more_memory_than_the_budget_is_stopped():
    budget = sandbox.Budget(cpu_s=30, wall_s=30, memory_bytes=300 * MB)
    with pytest.raises(parsing.ParseError) as stopped:
        sandbox.parse_isolated(files.docx_styles_bomb(styles_bytes=40 * MB), "x.docx", limits=NO_CAPS, budget=budget)
    assert str(stopped.value).startswith("Reading the file needed more than 300 MB of memory.")


def test_a_file_that_takes_longer_than_the_wall_clock_budget_is_killed():
    budget = sandbox.Budget(cpu_s=30, wall_s=1, memory_bytes=1024 * MB)
    started = time.monotonic()
    with pytest.raises(parsing.ParseError, match=r"^Reading the file took longer than 1 s\."):
        sandbox.parse_isolated(files.pdf_bomb(pages=8, stream_bytes=2 * MB), "x.pdf", limits=NO_CAPS, budget=budget)
    assert time.monotonic() - started < 3


def test_one_reader_serves_file_after_file_and_a_new_one_replaces_it_if_it_dies():
    note = b"Descale the kettle every month."
    sandbox.parse_isolated(note, "a.txt", limits=parsing.DEFAULT_LIMITS, budget=ROOMY)
    reader = sandbox._reader.process
    with pytest.raises(parsing.ParseError):  # a child killed over its budget leaves the reader as it was
        sandbox.parse_isolated(
            files.pdf_bomb(pages=8, stream_bytes=2 * MB), "x.pdf", limits=NO_CAPS, budget=sandbox.Budget(1, 30, 1 << 30)
        )
    assert sandbox._reader.process is reader and reader.poll() is None
    reader.kill()
    reader.wait()
    assert (
        sandbox.parse_isolated(note, "b.txt", limits=parsing.DEFAULT_LIMITS, budget=ROOMY).blocks[0].text
        == note.decode()
    )
    assert sandbox._reader.process is not reader
