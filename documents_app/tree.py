"""A parsed document as a tree of nodes under its viking:// URI: the document, its sections (following
its own headings) and chunks of bounded size.

Sections nest by heading level, and every heading is a section of its own however short its text: a
three-line "Warranty" is what a warranty question should cite, not the tail of the section before it. A
heading with nothing under it at all (no text, no subsections) is left out: it would be an empty
directory, with nothing to read or cite, whose title alone could outrank real text. Text is cut into
chunks of at most ``chunk_tokens`` at paragraph, then sentence or line, then word boundaries; each
chunk is an exact slice of the original text and repeats the end of the one before (``overlap_tokens``)
so a passage cut in two is still found whole in one of them. Pure functions: nothing here touches the
database or a model.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from documents_app.parsing import Block
from documents_app.uris import chunk_uri, section_uri
from foundation.ai.tokens import CHARS_PER_TOKEN, estimate_tokens

DEFAULT_CHUNK_TOKENS = 300
DEFAULT_OVERLAP_TOKENS = 40


@dataclass
class Draft:
    """A node before it is stored: its place in the tree and its full text (L2, chunks only)."""

    kind: str  # "document", "section" or "chunk"
    title: str
    text: str = ""  # a section's own text before chunking; a chunk's L2
    heading_level: int = 0
    overlap: int = 0  # a chunk's first characters that repeat the end of the chunk before it
    uri: str = ""
    parent_uri: str = ""
    depth: int = 0
    position: int = 0
    children: list[Draft] = field(default_factory=list)

    @property
    def tokens(self) -> int:
        return estimate_tokens(self.text)


def build_tree(
    *,
    uri: str,
    title: str,
    blocks: Sequence[Block],
    chunk_tokens: int = DEFAULT_CHUNK_TOKENS,
    overlap_tokens: int = DEFAULT_OVERLAP_TOKENS,
) -> Draft:
    """The document's tree, with URIs and positions assigned; its root is the document node."""
    root = Draft(kind="document", title=title)
    _nest(root, blocks)
    _prune_empty(root)
    _chunk(root, chunk_tokens, overlap_tokens)
    _place(root, uri=uri, parent_uri="", depth=0, position=0)
    return root


def walk(node: Draft) -> Iterator[Draft]:
    """The node and all below it, in document order (a parent before its children)."""
    yield node
    for child in node.children:
        yield from walk(child)


def _nest(root: Draft, blocks: Sequence[Block]) -> None:
    stack = [root]
    for block in blocks:
        if block.level == 0:
            root.text = f"{root.text}\n\n{block.text}".strip()
            continue
        while len(stack) > 1 and stack[-1].heading_level >= block.level:
            stack.pop()
        section = Draft(kind="section", title=block.title, text=block.text, heading_level=block.level)
        stack[-1].children.append(section)
        stack.append(section)


def _prune_empty(node: Draft) -> None:
    """Leaves out sections with neither text nor anything below them (once their own empty subsections
    are gone); a heading without text but with subsections stays, as their parent."""
    for child in node.children:
        _prune_empty(child)
    node.children = [child for child in node.children if child.text.strip() or child.children]


_PARAGRAPH = re.compile(r"\S(?:.*?\S)?(?=\n\s*\n|\s*$)", re.DOTALL)
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"')\]]*\s+|\n")


def _spans(text: str, limit: int) -> list[tuple[int, int]]:
    """Pieces of ``text`` as (start, end) offsets, each at most ``limit`` tokens: paragraphs, else
    sentences (or lines), else runs of words, else runs of characters."""
    spans: list[tuple[int, int]] = []
    max_chars = limit * CHARS_PER_TOKEN - 8  # room for the separator a chunk may start with
    for paragraph in _PARAGRAPH.finditer(text):
        start, end = paragraph.span()
        if end - start <= max_chars:
            spans.append((start, end))
            continue
        cuts = [start] + [m.end() for m in _SENTENCE_END.finditer(text, start, end)] + [end]
        for left, right in itertools.pairwise(cuts):
            while right - left > max_chars:  # no sentence end in reach: cut at a space, else anywhere
                space = text.rfind(" ", left + 1, left + max_chars)
                cut = space + 1 if space > left else left + max_chars
                spans.append((left, cut))
                left = cut
            if right > left:
                spans.append((left, right))
    return spans


def _overlap_start(text: str, start: int, end: int, budget_chars: int) -> int:
    """Where the next chunk starts to repeat the end of ``text[start:end]``: the earliest sentence or
    line start within the last ``budget_chars`` characters, or ``end`` for no overlap."""
    floor = max(start, end - budget_chars)
    for match in _SENTENCE_END.finditer(text, floor, end):
        if match.end() < end:
            return match.end()
    return end


def split_into_chunks(text: str, *, chunk_tokens: int, overlap_tokens: int) -> list[tuple[str, int]]:
    """Consecutive chunks of at most ``chunk_tokens``, each an exact slice of ``text``, with how many
    of its first characters repeat the end of the chunk before (whole sentences, up to
    ``overlap_tokens``). Joining each chunk without its repeated start gives back ``text`` exactly,
    from its first to its last non-blank character."""
    spans = _spans(text, chunk_tokens)
    max_chars = chunk_tokens * CHARS_PER_TOKEN
    chunks: list[tuple[str, int]] = []
    start = end = None
    previous_end = None
    for span_start, span_end in spans:
        if start is None:
            start, end = span_start, span_end
            continue
        if span_end - start > max_chars:
            chunks.append((text[start:end], max(0, previous_end - start) if previous_end else 0))
            previous_end = end
            overlap_from = _overlap_start(text, start, end, overlap_tokens * CHARS_PER_TOKEN)
            if overlap_from < end and span_end - overlap_from <= max_chars:
                start = overlap_from
            else:  # no overlap: start where the last chunk ended, keeping the space between them
                start = end if span_end - end <= max_chars else span_start
        end = span_end
    if start is not None:
        chunks.append((text[start:end], max(0, previous_end - start) if previous_end else 0))
    return chunks


def _chunk(node: Draft, chunk_tokens: int, overlap_tokens: int) -> None:
    for child in node.children:
        _chunk(child, chunk_tokens, overlap_tokens)
    if node.kind == "chunk" or not node.text:
        return
    pieces = split_into_chunks(node.text, chunk_tokens=chunk_tokens, overlap_tokens=overlap_tokens)
    # A node's own text comes before its subsections in the document.
    node.children = [
        Draft(kind="chunk", title=node.title, text=piece, overlap=overlap) for piece, overlap in pieces
    ] + node.children
    node.text = ""


def _place(node: Draft, *, uri: str, parent_uri: str, depth: int, position: int) -> None:
    node.uri, node.parent_uri, node.depth, node.position = uri, parent_uri, depth, position
    sections = chunks = 0
    for index, child in enumerate(node.children):
        if child.kind == "chunk":
            chunks += 1
            child_uri = chunk_uri(uri, chunks)
        else:
            sections += 1
            child_uri = section_uri(uri, sections)
        _place(child, uri=child_uri, parent_uri=uri, depth=depth + 1, position=index)
