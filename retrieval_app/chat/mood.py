"""The mood of an answer: how far the person can lean on it, said in one word and one sentence.

It is derived from what the turn actually had, never guessed from the wording of the answer:

- ``apologetic``: something went wrong on our side. The search failed (the answer has no context), or
  the model failed partway, so the answer is missing or partial.
- ``uncertain``: the turn ran, but the context is weak: nothing was found, or the best passage scores
  below ``CHAT_MOOD_CONFIDENT_SCORE`` (a blend of meaning and shared words, 0 to 1).
- ``confident``: the answer rests on at least one strong passage.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from django.conf import settings

from retrieval_app.search.hits import Hit

CONFIDENT, UNCERTAIN, APOLOGETIC = "confident", "uncertain", "apologetic"


@dataclass(frozen=True)
class Mood:
    """One of the three moods, with the reason in plain words."""

    mood: str
    reason: str

    def as_dict(self) -> dict[str, str]:
        return {"mood": self.mood, "mood_reason": self.reason}


def mood_of(*, context: Sequence[Hit], retrieval_error: str = "", failed: bool = False) -> Mood:
    if failed:
        return Mood(APOLOGETIC, "The model failed while answering, so this answer is missing or partial.")
    if retrieval_error:
        return Mood(APOLOGETIC, "The search failed, so this answer uses none of your documents or memories.")
    if not context:
        return Mood(UNCERTAIN, "Nothing relevant was found in your documents, memories or conversations.")
    best = max(hit.score for hit in context)
    if best >= settings.CHAT_MOOD_CONFIDENT_SCORE:
        return Mood(CONFIDENT, f"Grounded in {len(context)} passage(s); the best matches strongly ({best:.2f}).")
    return Mood(UNCERTAIN, f"The passages found match only weakly (best {best:.2f}); check the sources.")
