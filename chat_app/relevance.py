"""How relevant each retrieved passage is to the question: a probability, judged from what the turn
knows about the passage, never from the answer's wording.

A search ranks passages; it does not say whether the best of them answers anything ("what is the capital
of Mongolia?" still gets the least unrelated passages of a kettle manual). The judgment is a small
logistic model over signals the turn already has:

- ``similarity``: the passage's own cosine similarity to the question (meaning); ``best_similarity``,
  the best of all the passages' (whether the library holds anything close to the question at all);
- ``score``: the search's blended score; ``gap``: how far it falls below the best passage's; ``rank``:
  its place in the results (0 first, 1 sixth or later);
- ``coverage``: the share of the question's words the passage holds, each weighted by its rarity in the
  person's documents (inverse document frequency, counted as if a hundred more passages held every word
  at the same rate, which a library of one manual cannot tell apart), so "Mongolia" counts for more than
  "capital";
  ``quote_coverage``: the same for the span the answer would quote;
- ``distinctive`` and ``quote_distinctive``: the same share with each word also weighted by how few of
  the retrieved passages hold it (not at all when all of them do), raised to the power
  ``DISTINCTIVE_POWER``: in a manual every passage names the product, so what sets the answer apart is
  holding (nearly) all of the other words, such as "preset mode" and "default", and holding some of
  them says little; when nothing sets the passages apart, none of them is distinctive;
- ``unknown_name``: 1 when the question names something (a capitalised word or a code such as "Z5")
  that the person's documents never mention and the passage does not hold ("the Zephyr kettle" when
  the library has another kettle).

The coefficients are fitted offline by ``bench/mood_calibration.py --fit`` on labelled data (the
evaluation set's questions with their relevant sections, plus questions and statements that nothing in it
answers, asked of the whole set in one library and of each document alone), signals whose fitted weight
came out against their meaning left out, and committed below; the script checks them on a held-out part.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings
from django.db import connection

from chat_app.quotes import Quote, best_quote
from documents_app.selectors import node_scope
from foundation import bm25
from foundation.text import TEXT_SEARCH_CONFIG
from retrieval_app.hits import Hit

FEATURES = (
    "similarity",
    "best_similarity",
    "score",
    "gap",
    "rank",
    "coverage",
    "quote_coverage",
    "distinctive",
    "quote_distinctive",
    "unknown_name",
)
# Fitted by ``bench/mood_calibration.py --fit``: L2-regularised logistic regression (Newton's method),
# on the training two thirds of the evaluation set's questions and the off-topic set, asked both of the
# whole corpus in one library and of each document alone. ``similarity``, ``score`` and
# ``quote_coverage`` are left out: beside the others, their weight came out against their meaning (what
# they say, ``best_similarity``, ``gap`` and ``coverage`` already say).
INTERCEPT = -2.912
COEFFICIENTS: dict[str, float] = {
    "best_similarity": 0.685,
    "gap": -1.263,
    "rank": -1.479,
    "coverage": 3.569,
    "distinctive": 1.602,
    "quote_distinctive": 1.057,
    "unknown_name": -1.324,
}
# Holding some of the words that set a passage apart says little; holding all of them says much.
DISTINCTIVE_POWER = 4
# A library of a few documents cannot tell which words are rare. In a manual alone, "lid" and "hinge" are
# in all of its few passages and "cleaned" in none, which would make "cleaned" nearly all that "how should
# the lid hinge be cleaned?" asks about. So each stem is counted as if the library also held
# ``PRIOR_NODES`` passages holding every stem at the rate ``PRIOR_RATE``: in a small library the question's
# words weigh nearly alike, in a large one by the library's own counts.
PRIOR_NODES = 100
PRIOR_RATE = 0.05
# The rank from which every passage counts as "late" (the sixth result and after).
LAST_RANK = 5
# The question's frame rather than its subject, so not looked for in the passages: "how often" and "how
# long" (the answer says "every four weeks", not "often"), "fix", "solve" or "get rid of" (it says what to
# do: "To descale:", not "remove limescale"), "tell me about" or "explain" (it just says it).
_FRAME = re.compile(
    r"\b(?<=how )(?:often|long|much|many|far|old|soon|big|large|heavy|fast|frequently|quickly|late|early)\b"
    r"|\b(?:fix|fixes|fixing|solve|resolve|repair|troubleshoot|explain|describe|remove|removing|get rid of)\b"
    r"|\b(?:tell|show|give|remind) me(?: about| of)?\b|\bwhat do you know\b|\bdo you know\b"
    r"|\bfor an? living\b"  # what they do for a living: their work, not where they live
    r"|\bmeaning of\b",
    re.IGNORECASE,
)
# "What does a solid red light mean?": the answer says what it is ("Solid red: no internet."), never
# "means"; "how do I calculate the mean?" still asks about the mean.
_WHAT_IT_MEANS = re.compile(r"^(?P<asked>\W*what\s+(?:does|do|did)\b.*?)\bmean(?P<end>\W*)$", re.IGNORECASE)
# Words of a question that name something: capitalised (not opening a sentence, not "I") or with digits.
_NAME = re.compile(r"(?<![.!?]\s)(?<!^)\b(?!I\b|I')[A-Z][\w-]*|\b[A-Za-z-]*\d[\w-]*")


@dataclass(frozen=True)
class Judged:
    """A retrieved passage with the span the built-in answer would quote and its judged relevance."""

    hit: Hit
    quote: Quote | None
    relevance: float
    features: dict[str, float]

    @property
    def strong(self) -> bool:
        """Relevant enough for a confident answer (CHAT_MOOD_CONFIDENT_SCORE)."""
        return self.relevance >= settings.CHAT_MOOD_CONFIDENT_SCORE

    @property
    def quotable(self) -> bool:
        """Relevant enough to be quoted at all, if only as weakly relevant (CHAT_RELEVANCE_FLOOR)."""
        return self.quote is not None and self.relevance >= settings.CHAT_RELEVANCE_FLOOR

    def as_trace(self) -> dict[str, Any]:
        return {
            "uri": self.hit.uri,
            "relevance": round(self.relevance, 3),
            "features": {name: round(value, 3) for name, value in self.features.items()},
        }


def probability(features: dict[str, float]) -> float:
    """The model's probability that a passage with these features is relevant."""
    logit = INTERCEPT + sum(weight * features[name] for name, weight in COEFFICIENTS.items())
    return 1.0 / (1.0 + math.exp(-logit))


def passage_of(hit: Hit) -> str:
    """The text a passage is judged and quoted by: its full text, else its best cheap tier."""
    return hit.content or hit.text


def _lexemes(texts: Sequence[str]) -> list[set[str]]:
    """The stems PostgreSQL's search configuration makes of each text, as searches see them."""
    if not texts:
        return []
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT tsvector_to_array(to_tsvector(%s::regconfig, t))"
            " FROM unnest(%s::text[]) WITH ORDINALITY AS x(t, n) ORDER BY n",
            [TEXT_SEARCH_CONFIG, list(texts)],
        )
        return [set(row[0] or []) for row in cursor.fetchall()]


def _frequencies(owner, lexemes: set[str]) -> tuple[int, dict[str, int]]:
    """How many document nodes the owner has (documents, sections and chunks, whose titles name what
    the text may not), and how many hold each stem (remembered a few minutes)."""
    if not lexemes:
        return 0, {}
    _, nodes = node_scope(owner=owner, uri=None)
    rows, _ = bm25.collection_stats(nodes)
    return rows, bm25.document_frequencies(nodes, sorted(lexemes))


def _about(hit: Hit) -> str:
    """What a passage is part of, by title: its document and its section (a memory or a turn has none)."""
    return " ".join(filter(None, (hit.document_title, hit.title))) if hit.origin == "document" else ""


def _titled(hits: Sequence[Hit]) -> list[str]:
    """Each passage with what it is part of: its document's title and its own (the text of a chunk
    rarely repeats the product or policy its manual is about), and what it means beyond its words (a
    memory of a peanut allergy is a food to avoid eating)."""
    return [" \n".join(filter(None, (hit.document_title, hit.title, hit.implies, passage_of(hit)))) for hit in hits]


def _rarity(rows: int, frequency: int) -> float:
    """A stem's weight: its inverse document frequency, counted with the prior passages (``PRIOR_NODES``)."""
    return bm25.idf(rows + PRIOR_NODES, frequency + PRIOR_RATE * PRIOR_NODES)


@dataclass(frozen=True)
class Question:
    """What the judgment needs of the question: each stem's weight (its rarity among the owner's
    documents), and the stems of the names it uses that those documents never mention."""

    weights: dict[str, float]
    unknown_names: frozenset[str]


def _share(weights: dict[str, float], held: set[str]) -> float:
    total = sum(weights.values())
    return sum(weight for lexeme, weight in weights.items() if lexeme in held) / total if total else 0.0


def features_of(
    *, hit: Hit, rank: int, hits: Sequence[Hit], question: Question, held: Sequence[set[str]], quoted: set[str]
) -> dict[str, float]:
    """The signals the model weighs for ``hits[rank]`` (see the module's docstring); ``held`` is each
    hit's stems, ``quoted`` those of this hit's quote."""
    weights = question.weights
    # How far a stem tells the passages apart: not at all when every one of them holds it (the product
    # a manual is about), the most when none does (a word the question asks about and nothing answers).
    spread = len(hits) + 0.5
    local = {lexeme: math.log(spread / (sum(lexeme in h for h in held) + 0.5)) for lexeme in weights}
    distinct = {lexeme: weight * local[lexeme] for lexeme, weight in weights.items()}
    similarities = [max(h.similarity if h.similarity is not None else h.score, 0.0) for h in hits]
    return {
        "similarity": similarities[rank],
        "best_similarity": max(similarities),
        "score": hit.score,
        "gap": max(max(h.score for h in hits) - hit.score, 0.0),
        "rank": min(rank, LAST_RANK) / LAST_RANK,
        "coverage": _share(weights, held[rank]),
        "quote_coverage": _share(weights, quoted),
        "distinctive": _share(distinct, held[rank]) ** DISTINCTIVE_POWER,
        "quote_distinctive": _share(distinct, quoted) ** DISTINCTIVE_POWER,
        "unknown_name": 1.0 if question.unknown_names - held[rank] else 0.0,
    }


def _memory_floor(hit: Hit, features: dict[str, float], question: Question) -> float:
    """The least relevance of a long-term memory the search kept. It is a fact about the person asking,
    often worded nothing like the question ("what should I avoid eating?" and a peanut allergy): always
    worth saying, if only as what comes closest. It answers for sure when the question asks about the person
    as a whole ("what do you know about me?"), when the question asks for what it means for them ("any food
    I should stay away from?" and a peanut allergy), or when it holds every word of the question ("where do
    I live?" and "Lives in Lisbon."): one passage alone sets nothing apart, so the model would doubt it."""
    if hit.about_owner or hit.asked_for or (question.weights and features["coverage"] >= 1.0):
        return settings.CHAT_MOOD_CONFIDENT_SCORE
    return settings.CHAT_RELEVANCE_FLOOR


def _subject(question: str) -> str:
    """The question without its frame ("how often", "what does ... mean"): what the passages must hold."""
    return _FRAME.sub(" ", _WHAT_IT_MEANS.sub(r"\g<asked>\g<end>", question.strip()))


def judge(*, owner, query: str, hits: Sequence[Hit], written: str = "") -> list[Judged]:
    """Each hit, in the search's order, with its quote and its judged relevance to what was asked.

    ``query`` is what was searched for, ``written`` the message as the person wrote it. A follow-up is
    searched with what it refers to ("and how long is it under warranty?" with the kettle of the turn
    before), but a passage answers it by holding its own words (the warranty), not the earlier question's:
    the written words are judged, and the searched ones only when the message has none of its own ("tell
    me more"). Two round trips at most: the stems of the question, its names, every passage (with its
    document's title, which the search read with it) and every quote; how rare the question's stems are
    (remembered a few minutes)."""
    if not hits:
        return []
    quotes = [best_quote(query, passage_of(hit), written=written, about=_about(hit)) for hit in hits]
    subjects = [_subject(text) for text in dict.fromkeys(filter(None, (written, query)))]
    names = _NAME.findall(" ".join(subjects))
    texts = [*subjects, *_titled(hits), *(quote.text if quote else "" for quote in quotes), *names]
    stems = _lexemes(texts)
    asked = next((found for found in stems[: len(subjects)] if found), set())
    passages = stems[len(subjects) :]  # each passage's stems, then each quote's, then the names'
    held, quoted = passages[: len(hits)], passages[len(hits) : 2 * len(hits)]
    named = set().union(*passages[2 * len(hits) :]) & asked
    rows, frequencies = _frequencies(owner, asked)
    question = Question(
        weights={lexeme: _rarity(rows, frequencies.get(lexeme, 0)) for lexeme in asked},
        unknown_names=frozenset(lexeme for lexeme in named if not frequencies.get(lexeme, 0)),
    )
    judged = []
    for rank, (hit, quote) in enumerate(zip(hits, quotes, strict=True)):
        features = features_of(hit=hit, rank=rank, hits=hits, question=question, held=held, quoted=quoted[rank])
        relevance = probability(features)
        if hit.origin == "memory":
            relevance = max(relevance, _memory_floor(hit, features, question))
        judged.append(Judged(hit=hit, quote=quote, relevance=relevance, features=features))
    return judged
