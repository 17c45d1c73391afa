"""The shapes the fact tables are written in.

A document family (product manuals, runbooks, ...) shares its section headings and its kinds of fact across
all its documents; only the values differ. That is what makes retrieval non-trivial on purpose: five manuals
all have a "Warranty" section in near-identical words, and only the entity name and the numbers tell them
apart. Each kind of fact carries its own sentence templates for the document and for the two query styles,
so a query is answerable from exactly the section its fact was rendered into.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass, field

Values = dict[str, str]


@dataclass(frozen=True)
class Fact:
    """One kind of fact, e.g. "warranty length", rendered once into every document of its family.

    ``says`` are the sentence variants written into the document; ``lex`` queries reuse their key words,
    ``para`` queries ask the same thing in other words (checked mechanically by ``check.py``). ``xref``
    names another section that mentions the topic without giving the answer, which becomes a grade-1 label.
    """

    key: str
    section: str
    gen: Callable[[random.Random, dict[str, str]], Values]
    says: tuple[str, ...]
    lex: tuple[str, ...]
    para: tuple[str, ...]
    topic: str
    answer: str
    xref: tuple[str, tuple[str, ...]] | None = None


@dataclass(frozen=True)
class Family:
    """A set of documents that look alike: same headings, same kinds of fact, different values."""

    name: str
    title: str
    sections: tuple[str, ...]
    facts: tuple[Fact, ...]
    fillers: dict[str, tuple[str, ...]]
    common: tuple[str, ...]
    intro: tuple[str, ...]
    entities: tuple[dict[str, str], ...]
    # (user, assistant) pairs that open a conversation about one entity of this family
    openers: tuple[tuple[str, str], ...] = field(default=())
    # how a user introduces two entities of this family at once, with {a} and {b}
    pair: str = "I'm comparing {a} and {b}."


def fact(
    key: str,
    section: str,
    gen: Callable[[random.Random, dict[str, str]], Values],
    *,
    says: list[str],
    lex: list[str],
    para: list[str],
    topic: str,
    answer: str,
    xref: tuple[str, list[str]] | None = None,
) -> Fact:
    """Keyword-only constructor so the tables read like forms rather than long positional tuples."""
    return Fact(
        key=key,
        section=section,
        gen=gen,
        says=tuple(says),
        lex=tuple(lex),
        para=tuple(para),
        topic=topic,
        answer=answer,
        xref=(xref[0], tuple(xref[1])) if xref else None,
    )
