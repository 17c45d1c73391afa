"""The mood of an answer: how far the person can lean on it, said in one word and one sentence.

It is derived from what the turn actually had, never guessed from the wording of the answer:

- ``apologetic``: something went wrong on our side. The search failed (the answer has no context), or
  the model failed partway, so the answer is missing or partial.
- ``confident``: a question answered from at least one passage judged relevant, that is whose judged
  relevance (``relevance``: a probability) reaches ``CHAT_MOOD_CONFIDENT_SCORE``; or a message that
  asked nothing (a statement, a greeting), answered by saying what was noted from it.
- ``uncertain``: a question for which only weakly relevant passages were found (judged from
  ``CHAT_RELEVANCE_FLOOR`` up, below the confident score), or nothing relevant at all.

How it was calibrated: ``bench/mood_calibration.py`` runs the real search, as a chat turn does, for the
371 labelled questions of ``bench/evalset`` (a passage is relevant when it lies in a section labelled
as answering its question) and for 103 questions and statements of ``bench/moodset`` that nothing in
those documents answers (general knowledge, other domains, near misses naming another product or
company, statements, greetings). The relevance model's coefficients were fitted on two thirds of the
questions, and the two thresholds chosen on them: from 0.65 a passage makes an answer confident (on
the training part, 97% of confident answers quote only relevant passages; below 0.6, fewer); from 0.15
it is quoted at all (94% of off-topic questions then find nothing relevant, 2.5% of answerable ones
wrongly so). On the other third, held out: 78% of the 41 confident answers quote only relevant
passages (83% a relevant one first), none answers an off-topic question; 93% of off-topic questions
find nothing relevant, 0.8% of answerable ones. The README's chat section has the whole report.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from chat_app import speech
from chat_app.relevance import Judged

CONFIDENT, UNCERTAIN, APOLOGETIC = "confident", "uncertain", "apologetic"


@dataclass(frozen=True)
class Mood:
    """One of the three moods, with the reason in plain words."""

    mood: str
    reason: str

    def as_dict(self) -> dict[str, str]:
        return {"mood": self.mood, "mood_reason": self.reason}


def _plural(count: int, word: str, plural: str = "") -> str:
    return f"{count} {word if count == 1 else plural or word + 's'}"


def mood_of(
    *,
    judged: Sequence[Judged] = (),
    kind: str = speech.QUESTION,
    noted: int = 0,
    retrieval_error: str = "",
    failed: bool = False,
) -> Mood:
    """The mood of a turn from the passages it judged (those it quoted, for the built-in engine; all it
    retrieved, for a model), what the message was, and how many memories it noted."""
    if failed:
        return Mood(APOLOGETIC, "The model failed while answering, so this answer is missing or partial.")
    if retrieval_error:
        return Mood(APOLOGETIC, "The search failed, so this answer uses none of your documents or memories.")
    strong = [j for j in judged if j.strong]
    weak = [j for j in judged if j.quotable and not j.strong]
    best = max((j.relevance for j in judged), default=0.0)
    if strong:
        return Mood(
            CONFIDENT,
            f"Grounded in {_plural(len(strong), 'passage')} judged relevant to your question (best {best:.2f}).",
        )
    if kind != speech.QUESTION:
        what = f"noted {_plural(noted, 'memory', 'memories')} from it" if noted else "nothing needed looking up"
        return Mood(CONFIDENT, f"Your message asked nothing of your sources; {what}.")
    if weak:
        return Mood(
            UNCERTAIN,
            f"Only weakly relevant passages were found (best judged {best:.2f} of 1); check the sources.",
        )
    return Mood(UNCERTAIN, "Nothing relevant was found in your documents, memories or conversations.")
