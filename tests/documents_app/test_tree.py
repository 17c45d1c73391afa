"""Documents as trees: sections follow headings, chunks are bounded and overlap, tiny sections merge."""

import itertools

from documents_app.parsing import Block, parse
from documents_app.tree import build_tree, split_into_chunks, walk
from retrieval_app.ai.tokens import estimate_tokens
from tests.documents_app.test_parsing import MARKDOWN

URI = "viking://resources/users/7/documents/abc"


def _sentences(count: int, topic: str) -> str:
    return " ".join(f"Sentence {i} explains {topic} in some detail for the reader." for i in range(count))


def test_sections_nest_by_heading_level_with_uris_under_the_document():
    parsed = parse(MARKDOWN, "guide.md")
    root = build_tree(uri=URI, title=parsed.title, blocks=parsed.blocks, min_section_tokens=1)
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


def test_long_sections_are_cut_into_bounded_overlapping_chunks_in_order():
    text = _sentences(200, "the claims process")
    chunks = split_into_chunks(text, chunk_tokens=120, overlap_tokens=30)
    assert len(chunks) > 5
    assert all(estimate_tokens(chunk) <= 120 for chunk in chunks)
    for before, after in itertools.pairwise(chunks):
        last_sentence = before.rsplit("Sentence ", 1)[-1]
        assert after.startswith("Sentence " + last_sentence), "each chunk repeats the end of the one before"
    assert "\n\n" not in chunks[0], "sentences of one paragraph stay one paragraph"
    numbers = [int(part.split()[0]) for chunk in chunks for part in chunk.split("Sentence ")[1:]]
    assert sorted(set(numbers)) == list(range(200)), "nothing is lost"


def test_a_single_giant_paragraph_without_sentences_is_still_cut():
    chunks = split_into_chunks("word " * 5000, chunk_tokens=100, overlap_tokens=10)
    assert all(estimate_tokens(c) <= 100 for c in chunks) and sum(len(c.split()) for c in chunks) >= 5000


def test_tiny_sections_merge_into_the_section_before_them():
    blocks = [
        Block(1, "Big", _sentences(10, "billing")),
        Block(1, "Tiny", "Two words."),
        Block(1, "Also big", _sentences(10, "refunds")),
    ]
    root = build_tree(uri=URI, title="t", blocks=blocks, min_section_tokens=20)
    assert [n.title for n in root.children] == ["Big", "Also big"]
    assert "Tiny\nTwo words." in root.children[0].children[-1].text


def test_a_tiny_first_section_joins_the_document_text():
    root = build_tree(uri=URI, title="t", blocks=[Block(1, "Note", "Short."), Block(1, "Main", _sentences(10, "x"))])
    assert root.children[0].kind == "chunk" and "Note\nShort." in root.children[0].text


def test_headings_with_nothing_under_them_disappear():
    root = build_tree(uri=URI, title="t", blocks=[Block(1, "Empty", ""), Block(1, "Full", _sentences(10, "y"))])
    assert [n.title for n in root.children] == ["Full"]
