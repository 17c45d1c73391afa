"""The built-in rolling summary of a conversation: what matters from every folded turn, within a budget.

A conversation keeps returning to its subject, so the sentences that carry its most frequent words
are the ones that introduced it: ranking sentences one by one would fill the budget with the first
exchange. Instead the summary is built as a coverage: each sentence is worth the weight of the words
it adds that the summary does not hold yet (frequency times rarity, as ``extractive.term_weights``),
more for facts (numbers, dates, names), decisions, requests, questions and to-dos, much less for
chatter; the best value per word is taken until the budget is spent. Facts said once, late, in a
long chat therefore stay, and a repeated subject is said once. The previous summary's lines compete
with the new turns on the same terms (new turns win ties), so the summary follows the conversation
without forgetting what only its beginning said. Sentences are quoted, never invented, and labelled
with who said them; the result is deterministic.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from foundation.ai import extractive
from foundation.ai.extractive import Sentence

# How much a sentence of each kind is worth, beside the words it adds.
FACT_WEIGHT = 1.5
DECISION_WEIGHT = 1.4
QUESTION_WEIGHT = 1.3
TODO_WEIGHT = 1.3
CHATTER_WEIGHT = 0.1
SHORT_WEIGHT = 0.4
SHORT_WORDS = 4
# Newer turns win ties against what the summary already says, so it follows the conversation.
FRESH_WEIGHT = 1.1
# Cost grows a little slower than length, so a long sentence holding several facts can still win.
COST_EXPONENT = 0.8
MIN_WORDS = 3
_CHATTER = re.compile(
    r"^\s*(?:lol|haha+|hehe|omg|wow|yay|ugh|hmm+|oh well|anyway|nice|cool|perfect|awesome|ok(?:ay)?|sure|right|"
    r"good (?:idea|point)|sounds (?:good|great)|got it|no worries|fair enough)\b",
    re.IGNORECASE,
)


def _worth(sentence: Sentence) -> float:
    """What a sentence's kind makes it worth, whatever words it adds."""
    text = sentence.text
    worth = 1.0
    if extractive.is_pleasantry(text) or _CHATTER.match(text):
        worth *= CHATTER_WEIGHT
    if extractive._DIGIT.search(text) or extractive._DATE.search(text) or extractive._CAPITALIZED.search(text):
        worth *= FACT_WEIGHT
    if extractive._DECISION.search(text):
        worth *= DECISION_WEIGHT
    if sentence.role == "user" and text.rstrip().endswith("?"):
        worth *= QUESTION_WEIGHT
    if extractive._TODO.search(text):
        worth *= TODO_WEIGHT
    if sentence.words < SHORT_WORDS:
        worth *= SHORT_WEIGHT
    return worth * (FRESH_WEIGHT if sentence.turn >= 0 else 1.0)


def cover(sentences: Sequence[Sentence], weights: dict[str, float], *, max_words: int) -> list[Sentence]:
    """The sentences that together cover the most weight within ``max_words`` (a speaker label costs a
    word), chosen greedily by the value of what each adds per word, in their original order."""
    worth = {s.position: _worth(s) for s in sentences}
    left = [s for s in sentences if s.terms]
    covered: set[str] = set()
    chosen: list[Sentence] = []
    used = 0
    while left:
        best, best_ratio = None, 0.0
        for sentence in left:
            cost = sentence.words + (1 if sentence.role != "summary" else 0)
            if used + cost > max_words:
                continue
            gain = sum(weights.get(term, 0.0) for term in set(sentence.terms) - covered) * worth[sentence.position]
            ratio = gain / cost**COST_EXPONENT
            if ratio > best_ratio:
                best, best_ratio = sentence, ratio
        if best is None:
            break
        chosen.append(best)
        covered |= set(best.terms)
        used += best.words + (1 if best.role != "summary" else 0)
        left.remove(best)
    return sorted(chosen, key=lambda s: s.position)


def rolling_summary(turns: Sequence[tuple[str, str]], *, previous: str = "", max_words: int = 200) -> str:
    """A summary of ``previous`` (an earlier summary, one sentence per line) and ``turns`` (role,
    content), at most ``max_words`` words, one labelled sentence per line."""
    carried = [
        Sentence(text=line.strip(), role="summary", turn=-1, position=i, terms=extractive.terms_of(line))
        for i, line in enumerate(line for line in (previous or "").splitlines() if line.strip())
    ]
    fresh = [
        sentence
        for sentence in extractive.sentences_of(turns, start_position=len(carried))
        if sentence.role != "system" and sentence.words >= MIN_WORDS
    ]
    pool = carried + fresh
    if not pool:
        return ""
    chosen = cover(pool, extractive.term_weights(pool), max_words=max_words)
    if not chosen:  # every sentence is longer than the budget: the best one, cut to fit
        best = max(pool, key=lambda s: (_worth(s) * len(set(s.terms)), -s.position))
        words = best.text.split()[: max_words - 1]
        chosen = [Sentence(text=" ".join(words), role=best.role, turn=best.turn, position=best.position)]
    return "\n".join(extractive.labelled(s) for s in chosen)
