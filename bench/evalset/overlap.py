"""Crude content-word overlap between a query and the sentence that answers it.

"Lexical" and "paraphrase" queries are only meaningful if the first really shares the answer's words and the
second really does not. A stop list plus suffix stripping is enough to tell the two apart for this corpus,
and being this simple it is easy to reason about when it flags a query.
"""

from __future__ import annotations

import re

# A word list is easier to read and extend as prose than as a column of quoted strings.
STOP = frozenset(
    """
    a an the and or of to in on at for by with from into onto as than then so if not no nor any some all each every
    per is are was were be been being am do does did done can could should would will shall may might must need
    it its it's this that these those there here i me my mine we us our you your they them their he him his she
    her what what's which who whom whose when where why how whether let tell say says said know get gets got
    have has had one ones also still just only up out down off over under again about much many more most less
    long often soon first next before after while during own other another else too very quite really thing
    things something anything way ways happen happens make makes made go goes going put take takes use used using
    day days week weeks month months year years hour hours minute minutes second seconds cm kg ml mm
    cent percent back right new old once re s t ok okay
    """.split()  # noqa: SIM905
)
SUFFIXES = ("ations", "ation", "ments", "ment", "ings", "ing", "ies", "ied", "ers", "er", "ed", "es", "ly", "s", "e")


def stem(word: str) -> str:
    for suffix in SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)]
    return word


def content_stems(text: str) -> set[str]:
    """Stems of the words that carry meaning: no stop words, no tokens containing digits."""
    words = re.findall(r"[a-z0-9]+", text.lower().replace("'s", ""))
    return {stem(w) for w in words if w not in STOP and not any(c.isdigit() for c in w)}


def shared(query: str, answer: str, entities: list[str]) -> set[str]:
    """Content stems the query has in common with the answer, not counting the entity's own name."""
    return (content_stems(query) & content_stems(answer)) - content_stems(" ".join(entities))
