"""Documents as trees: every heading is a section, chunks are bounded and overlap, empty headings go."""

import itertools

from documents_app.parsing import Block, parse
from documents_app.tree import build_tree, split_into_chunks, walk
from foundation.ai.tokens import estimate_tokens
from tests.samples import MARKDOWN

URI = "viking://resources/users/7/documents/abc"


def _sentences(count: int, topic: str) -> str:
    return " ".join(f"Sentence {i} explains {topic} in some detail for the reader." for i in range(count))


def test_sections_nest_by_heading_level_with_uris_under_the_document():
    parsed = parse(MARKDOWN, "guide.md")
    root = build_tree(uri=URI, title=parsed.title, blocks=parsed.blocks)
    outline = [(n.kind, n.depth, n.title, n.uri.removeprefix(URI)) for n in walk(root)]
    assert outline == [
        ("document", 0, "Warranty guide", ""),
        ("chunk", 1, "Warranty guide", "/chunk_0001"),
        ("section", 1, "Warranty guide", "/section_001"),
        ("chunk", 2, "Warranty guide", "/section_001/chunk_0001"),
        ("section", 2, "Coverage", "/section_001/section_001"),
        ("chunk", 3, "Coverage", "/section_001/section_001/chunk_0001"),
        ("section", 2, "Claims", "/section_001/section_002"),
        ("chunk", 3, "Claims", "/section_001/section_002/chunk_0001"),
    ]
    for node in walk(root):
        for position, child in enumerate(node.children):
            assert child.parent_uri == node.uri and child.position == position


def test_only_chunks_carry_text():
    root = build_tree(uri=URI, title="t", blocks=[Block(1, "A", _sentences(5, "alpha"))])
    assert all((n.kind == "chunk") == bool(n.text) for n in walk(root))


def _rebuilt(chunks):
    return "".join(text[overlap:] if index else text for index, (text, overlap) in enumerate(chunks))


def test_long_sections_are_cut_into_bounded_overlapping_chunks_in_order():
    text = _sentences(200, "the claims process")
    chunks = split_into_chunks(text, chunk_tokens=120, overlap_tokens=30)
    assert len(chunks) > 5
    assert all(estimate_tokens(chunk) <= 120 for chunk, _ in chunks)
    for (before, _), (after, overlap) in itertools.pairwise(chunks):
        assert overlap > 0 and before.endswith(after[:overlap]), "each chunk repeats the end of the one before"
        assert after.startswith("Sentence "), "the repeated part is whole sentences"
        assert estimate_tokens(after[:overlap]) <= 30
    assert _rebuilt(chunks) == text, "the chunks without their repeats give back the text exactly"


def test_lists_code_and_tables_keep_their_lines():
    listing = "\n".join(f"- item {i}: check the valve pressure on pump {i}" for i in range(80))
    text = f"Intro paragraph.\n\n{listing}\n\n| a | b |\n|---|---|\n| 1 | 2 |"
    chunks = split_into_chunks(text, chunk_tokens=100, overlap_tokens=20)
    assert all(estimate_tokens(c) <= 100 for c, _ in chunks)
    assert all(line.startswith(("- item", "Intro", "|")) for c, _ in chunks for line in c.strip().split("\n") if line)
    assert _rebuilt(chunks) == text


def test_a_giant_word_is_still_cut():
    blob = "QUJD" * 25_000  # 100k characters of base64, no space at all
    chunks = split_into_chunks(f"Attachment:\n\n{blob}", chunk_tokens=300, overlap_tokens=40)
    assert all(estimate_tokens(c) <= 300 for c, _ in chunks) and _rebuilt(chunks) == f"Attachment:\n\n{blob}"


def test_a_single_giant_paragraph_without_sentences_is_still_cut():
    text = "word " * 5000
    chunks = split_into_chunks(text, chunk_tokens=100, overlap_tokens=10)
    assert all(estimate_tokens(c) <= 100 for c, _ in chunks)
    assert _rebuilt(chunks) == text.strip()


def test_every_heading_is_a_section_however_short_its_text():
    blocks = [
        Block(1, "Big", _sentences(10, "billing")),
        Block(1, "Tiny", "Two words."),
        Block(1, "Also big", _sentences(10, "refunds")),
        Block(1, "7. Warranty", "Two years.\nKeep the receipt."),
    ]
    root = build_tree(uri=URI, title="t", blocks=blocks)
    assert [(n.kind, n.title) for n in root.children] == [
        ("section", "Big"),
        ("section", "Tiny"),
        ("section", "Also big"),
        ("section", "7. Warranty"),
    ]
    warranty = root.children[-1]
    assert [(c.kind, c.text) for c in warranty.children] == [("chunk", "Two years.\nKeep the receipt.")]
    assert "Two years" not in root.children[2].children[-1].text, "nothing is folded into the section before"
    assert warranty.uri == f"{URI}/section_004" and warranty.position == 3


def test_a_short_first_section_stays_a_section_after_the_document_text():
    root = build_tree(
        uri=URI, title="t", blocks=[Block(0, "", "Preface."), Block(1, "Note", "Short."), Block(1, "Main", "x y")]
    )
    assert [(n.kind, n.title) for n in root.children] == [("chunk", "t"), ("section", "Note"), ("section", "Main")]
    assert root.children[0].text == "Preface." and root.children[1].children[0].text == "Short."


def test_a_heading_without_text_but_with_subsections_is_their_parent():
    blocks = [Block(1, "Troubleshooting", ""), Block(2, "Error codes", "E1 means dry."), Block(2, "Reset", "Hold it.")]
    root = build_tree(uri=URI, title="t", blocks=blocks)
    (parent,) = root.children
    assert parent.title == "Troubleshooting" and [c.title for c in parent.children] == ["Error codes", "Reset"]
    assert all(c.kind == "section" for c in parent.children), "no empty chunk of its own"


def test_headings_with_nothing_under_them_disappear():
    blocks = [
        Block(1, "Empty", ""),
        Block(1, "Full", _sentences(10, "y")),
        Block(1, "Empty parent", ""),
        Block(2, "Empty child", "  "),
        Block(1, "Notes", ""),
    ]
    root = build_tree(uri=URI, title="t", blocks=blocks)
    assert [n.title for n in root.children] == ["Full"]
    assert [n.position for n in root.children] == [0] and root.children[0].uri == f"{URI}/section_001"
