"""A parsed document as a tree of nodes under its viking:// URI: the document, its sections (following
its own headings) and chunks of bounded size.

Sections nest by heading level. A section too small to stand alone is merged into the section before
it (or its parent), so retrieval never returns a heading with two words under it. Text is cut into
chunks of at most ``chunk_tokens`` at paragraph, then sentence, then word boundaries, each chunk
repeating the end of the one before (``overlap_tokens``) so a passage cut in two is still found whole
in one of them. Pure functions: nothing here touches the database or a model.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from documents_app.parsing import Block
from retrieval_app.ai.extractive import split_sentences
from retrieval_app.ai.tokens import estimate_tokens

DEFAULT_CHUNK_TOKENS = 300
DEFAULT_OVERLAP_TOKENS = 40
DEFAULT_MIN_SECTION_TOKENS = 40


@dataclass
class Draft:
    """A node before it is stored: its place in the tree and its full text (L2, chunks only)."""

    kind: str  # "document", "section" or "chunk"
    title: str
    text: str = ""  # a section's own text before chunking; a chunk's L2
    heading_level: int = 0
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
    min_section_tokens: int = DEFAULT_MIN_SECTION_TOKENS,
) -> Draft:
    """The document's tree, with URIs and positions assigned; its root is the document node."""
    root = Draft(kind="document", title=title)
    _nest(root, blocks)
    _merge_small(root, min_section_tokens)
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


def _merge_small(node: Draft, min_tokens: int) -> None:
    """Folds leaf sections below ``min_tokens`` into the section before them, or into their parent."""
    for child in node.children:
        _merge_small(child, min_tokens)
    kept: list[Draft] = []
    for child in node.children:
        if child.children or child.tokens >= min_tokens:
            kept.append(child)
            continue
        if not child.text:
            continue  # a heading with nothing under it
        piece = f"{child.title}\n{child.text}" if child.title else child.text
        if kept and not kept[-1].children:
            kept[-1].text = f"{kept[-1].text}\n\n{piece}".strip()
        elif not kept:
            node.text = f"{node.text}\n\n{piece}".strip()
        else:
            kept.append(child)  # after a section with subsections: it stays where it is
    node.children = kept


def _units(text: str, limit: int) -> list[tuple[str, bool]]:
    """Pieces of ``text`` of at most ``limit`` tokens (paragraphs, else sentences, else runs of words),
    each with whether it starts a paragraph."""
    units: list[tuple[str, bool]] = []
    for paragraph in re.split(r"\n\s*\n", text):
        paragraph = paragraph.strip()
        if not paragraph:
            continue
        if estimate_tokens(paragraph) <= limit:
            units.append((paragraph, True))
            continue
        pieces: list[str] = []
        for sentence in split_sentences(paragraph, max_chars=10**9):
            if estimate_tokens(sentence) <= limit:
                pieces.append(sentence)
                continue
            run: list[str] = []
            for word in sentence.split():
                if run and estimate_tokens(" ".join([*run, word])) > limit:
                    pieces.append(" ".join(run))
                    run = []
                run.append(word)
            if run:
                pieces.append(" ".join(run))
        units += [(piece, index == 0) for index, piece in enumerate(pieces)]
    return units


def _join(units: Sequence[tuple[str, bool]]) -> str:
    return "".join(
        (("\n\n" if starts else " ") if index else "") + piece for index, (piece, starts) in enumerate(units)
    )


def _tail(text: str, budget: int) -> str:
    """The last sentences of ``text`` that fit in ``budget`` tokens."""
    kept: list[str] = []
    for sentence in reversed(split_sentences(text, max_chars=10**9)):
        if estimate_tokens(" ".join([sentence, *kept])) > budget:
            break
        kept.insert(0, sentence)
    return " ".join(kept)


def split_into_chunks(text: str, *, chunk_tokens: int, overlap_tokens: int) -> list[str]:
    """Consecutive chunks of at most ``chunk_tokens``; each after the first begins with the previous
    chunk's last sentences, up to ``overlap_tokens``."""
    chunks: list[str] = []
    current: list[tuple[str, bool]] = []
    for unit in _units(text, chunk_tokens):
        if current and estimate_tokens(_join([*current, unit])) > chunk_tokens:
            chunks.append(_join(current))
            tail = _tail(current[-1][0], overlap_tokens)
            current = [(tail, True)] if tail and estimate_tokens(_join([(tail, True), unit])) <= chunk_tokens else []
        current.append(unit)
    if current:
        chunks.append(_join(current))
    return chunks


def _chunk(node: Draft, chunk_tokens: int, overlap_tokens: int) -> None:
    for child in node.children:
        _chunk(child, chunk_tokens, overlap_tokens)
    if node.kind == "chunk" or not node.text:
        return
    pieces = split_into_chunks(node.text, chunk_tokens=chunk_tokens, overlap_tokens=overlap_tokens)
    # A node's own text comes before its subsections in the document.
    node.children = [Draft(kind="chunk", title=node.title, text=piece) for piece in pieces] + node.children
    node.text = ""


def _place(node: Draft, *, uri: str, parent_uri: str, depth: int, position: int) -> None:
    node.uri, node.parent_uri, node.depth, node.position = uri, parent_uri, depth, position
    sections = chunks = 0
    for index, child in enumerate(node.children):
        if child.kind == "chunk":
            chunks += 1
            child_uri = f"{uri}/chunk_{chunks:04d}"
        else:
            sections += 1
            child_uri = f"{uri}/section_{sections:03d}"
        _place(child, uri=child_uri, parent_uri=uri, depth=depth + 1, position=index)
