"""What the built-in engine quotes from a passage: the sentence that best holds the question's words,
verbatim and contiguous in its source, with what it introduces.

A sentence that ends in a colon ("To descale:") carries the list or steps that follow it; in answer to
a "how" or "fix" question, the instructions that follow the best sentence come with it ("Error E3
means the kettle was switched on empty. Fill it above the MIN mark and press Start again."). Both stay
within ``MAX_LIST_ITEMS`` items and ``MAX_QUOTE_CHARS`` characters. A quote keeps the source's line
breaks where they make a list, so Markdown renders the list; within a paragraph, white space is folded.
Sentences are the ones ``extractive.split_sentences`` sees, found again in the source by their words.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache

from foundation.ai import extractive

# A quote never runs longer than this, nor carries more list items or following instructions.
MAX_QUOTE_CHARS = 900
MAX_LIST_ITEMS = 8
MAX_FOLLOWING_STEPS = 3
# How a cut quote ends, as the sentence splitter marks a sentence it cut.
CUT_MARK = " ..."

_LIST_ITEM = re.compile(r"^[ \t]*(?:[-*+\u2022]|\d{1,3}[.)])[ \t]+")
_BLANK_LINE = re.compile(r"\n[ \t]*\n")
_VOWEL = re.compile(r"[aeiouy]")
# Of two sentences holding the question's words alike, the one saying more besides is the answer; past
# this many other words, a longer one is not a better one.
SAYS_BESIDES_COUNTED = 3
# A short line without closing punctuation: a title ("Descaling", "Error codes"), never worth quoting
# while a real sentence holds the question's words.
_TITLE_LIKE = re.compile(r"^.{1,40}(?<![.!?:;,)\"'])$")
# A question that asks for a procedure or a remedy, so the instructions after the best sentence answer it.
_ASKS_HOW = re.compile(
    # "how long", "how often" and the like ask for a figure, not a procedure.
    r"\b(?:how(?!\s+(?:long|much|many|often|old|far|big|large|soon|late|early|fast|heavy)\b)|"
    r"fix|fixe[sd]|solve|resolve|repair|troubleshoot|steps?|procedure|instructions?|"
    r"what (?:should|can|do) (?:i|we) do|what to do|get rid of|clear|reset|remove|replace|install|set ?up|"
    r"descale|clean)\b",
    re.IGNORECASE,
)
# A sentence that speaks of the list after it as steps ("Follow these steps.", "as follows").
_ANNOUNCES = re.compile(r"\b(?:as follows|the following|these steps|the steps below|follow these)\b", re.IGNORECASE)
# Sentences that read as the next instruction: they open with a verb in the imperative or a step word.
_INSTRUCTION_OPENER_TEXT = """
    add adjust allow apply attach avoid boil call change charge check choose clean clear click close
    connect contact cover descale detach disconnect do don't drain dry empty enable disable enter fill
    fit follow go hold insert install keep leave let lift lock log loosen make move never note open
    place plug pour power press pull push put refill reinstall release reload remove repeat replace
    reset restart restore retry return rinse run save scroll select send set shake soak start stop
    switch tap tighten try turn type unlock unplug update upload use wait wash wipe
    then next finally afterwards after once to
"""
_INSTRUCTION_OPENERS = frozenset(_INSTRUCTION_OPENER_TEXT.split())


@dataclass(frozen=True)
class Sentence:
    """A sentence of the source, where it lies in it, and whether it opens a list item or a paragraph."""

    text: str
    start: int
    end: int
    item: bool
    new_block: bool


@dataclass(frozen=True)
class Quote:
    """The quoted span: ``text`` as the answer shows it, ``start``/``end`` where it lies in the source."""

    text: str
    start: int
    end: int


def _line_start(source: str, at: int) -> int:
    return source.rfind("\n", 0, at) + 1


def located_sentences(source: str) -> list[Sentence]:
    """The source's sentences, as the extractive engine splits them, each found again in the source."""
    found: list[Sentence] = []
    position = 0
    for sentence in extractive.split_sentences(source):
        words = sentence.removesuffix(CUT_MARK).split()
        if not words:
            continue
        match = re.compile(r"\s+".join(map(re.escape, words))).search(source, position)
        if match is None:  # a sentence the splitter rewrote beyond white space: not quotable verbatim
            continue
        before = source[_line_start(source, match.start()) : match.start()]
        item = bool(before.strip()) and bool(_LIST_ITEM.fullmatch(before + " "))
        if not found:
            new_block = True
        else:
            gap = source[found[-1].end : match.start()]
            # A list item, a blank line, or a line after a title starts a block of its own.
            new_block = item or bool(_BLANK_LINE.search(gap)) or ("\n" in gap and _title_like(found[-1]))
        found.append(Sentence(sentence, match.start(), match.end(), item, new_block))
        position = match.end()
    return found


def _rendered(source: str, start: int, end: int) -> str:
    """``source[start:end]`` as quoted: list items on lines of their own (as in the source), the
    hard-wrapped lines of a paragraph or an item joined, blank lines dropped."""
    lines: list[str] = []
    for raw in source[start:end].splitlines():
        line = " ".join(raw.split())
        if not line:
            continue
        if lines and not _LIST_ITEM.match(raw):
            lines[-1] += " " + line
        else:
            lines.append(line)
    return "\n".join(lines)


def _terms_of(text: str) -> set[str]:
    """The words of ``text`` that a quote is matched on, one form per verb: "descaling", "descaled" and
    "Descale" are one word here, so that "What is the descaling interval?" finds "Descale the kettle
    every four weeks." (the extractive engine's terms only fold plurals), while "plane" stays apart
    from "plan" and "care" from "car"."""
    return {_verb_folded(term) for term in extractive.terms_of(text)}


@lru_cache(maxsize=8192)
def _verb_folded(term: str) -> str:
    """``term`` without "-ed", "-ing" or a final "e", as Porter's stemmer takes them off (its steps 1b
    and 5a): the stem must keep a vowel, a doubled consonant is undoubled ("stopped"), an "e" comes back
    where the stem needs it ("hoping") and goes only from a stem long enough not to become another
    word ("descale", not "plane")."""
    if term.endswith("eed"):  # "need", "speed": no ending to take off
        return term
    for ending in ("ing", "ed"):
        stem = term.removesuffix(ending)
        if stem != term and _VOWEL.search(stem):
            term = _ending_restored(stem)
            break
    if term.endswith("e"):
        stem = term[:-1]
        measure = _measure(stem)
        if measure > 1 or (measure == 1 and not _short_syllable_end(stem)):
            return stem
    return term


def _ending_restored(stem: str) -> str:
    if stem.endswith(("at", "bl", "iz")):  # "rated", "troubled", "organized"
        return stem + "e"
    if len(stem) > 1 and stem[-1] == stem[-2] and stem[-1] not in "aeiouylsz":  # "stopped", "setting"
        return stem[:-1]
    if _measure(stem) == 1 and _short_syllable_end(stem):  # "hoping", "caring"
        return stem + "e"
    return stem


def _consonant_vowel(word: str) -> str:
    """ "c" or "v" for each letter, "y" a vowel after a consonant."""
    kinds = ""
    for letter in word:
        vowel = letter in "aeiou" or (letter == "y" and kinds[-1:] == "c")
        kinds += "v" if vowel else "c"
    return kinds


def _measure(stem: str) -> int:
    """How many vowel-consonant sequences ``stem`` holds (Porter's m)."""
    return re.sub(r"(.)\1+", r"\1", _consonant_vowel(stem)).count("vc")


def _short_syllable_end(stem: str) -> bool:
    """Whether ``stem`` ends consonant-vowel-consonant, the last not w, x or y ("hop", "car")."""
    return _consonant_vowel(stem).endswith("cvc") and stem[-1] not in "wxy"


def _best(sentences: Sequence[Sentence], wanted: set[str], focus: set[str], about: set[str]) -> int:
    """The index of the sentence holding most of the words the person wrote (``focus``), then of the
    question searched for (``wanted``), the words of what the passage is about (``about``: its document's
    and section's titles, "kettle" in a kettle's manual) counting only after the others ("how often should
    I descale the kettle?" is answered by "Descale every four weeks.", not by "Wipe the kettle with a damp
    cloth."); titles only when nothing else holds any; of equals, the one that says most besides (up to a
    few words: "The Aurora kettle descaling guide." only repeats "how often should the Aurora kettle be
    descaled?", where "Descale the Aurora kettle every four weeks" answers it; a sentence announcing steps
    says what they say), then the first."""
    specific_focus, specific = focus - about, wanted - about

    def rank(index: int) -> tuple[int, ...]:
        sentence = sentences[index]
        terms = _terms_of(sentence.text)
        held = len(wanted & terms)
        besides = SAYS_BESIDES_COUNTED if _introduces(sentences, index) else len(terms - wanted - focus)
        besides = min(besides, SAYS_BESIDES_COUNTED)
        told = -int(held > 0 and not _title_like(sentence))
        return (told, -len(specific_focus & terms), -len(specific & terms), -len(focus & terms), -held, -besides, index)

    return min(range(len(sentences)), key=rank)


def _title_like(sentence: Sentence) -> bool:
    return bool(_TITLE_LIKE.match(sentence.text))


def _introduces(sentences: Sequence[Sentence], index: int) -> bool:
    """Whether the sentence announces what follows: it ends in a colon, or it speaks of the steps
    that a list right after it gives."""
    sentence = sentences[index]
    if sentence.text.rstrip().endswith(":"):
        return True
    following = sentences[index + 1] if index + 1 < len(sentences) else None
    return bool(following and following.item and _ANNOUNCES.search(sentence.text))


def _instruction(sentence: Sentence) -> bool:
    words = sentence.text.split(maxsplit=1)
    return bool(words) and re.sub(r"[^\w']", "", words[0].lower()) in _INSTRUCTION_OPENERS


def _announced(sentences: Sequence[Sentence], best: int) -> int:
    """The last sentence of what ``best`` announces: the list that follows it, or without a list, the
    paragraph that follows (a few sentences of it)."""
    last, items = best, 0
    for index in range(best + 1, len(sentences)):
        sentence = sentences[index]
        if sentence.item:
            items += 1
        elif items and sentence.new_block:
            break  # the paragraph after the list is not part of it
        elif not items and ((index > best + 1 and sentence.new_block) or index > best + MAX_FOLLOWING_STEPS):
            break
        if items > MAX_LIST_ITEMS or sentence.end - sentences[best].start > MAX_QUOTE_CHARS:
            break
        last = index
    return last


def _instructions_after(sentences: Sequence[Sentence], best: int) -> int:
    """The last of the instructions that follow ``best`` in its paragraph (or, from a list item, in its
    list): the steps or the fix that answer a "how" question."""
    last = best
    for index in range(best + 1, min(len(sentences), best + 1 + MAX_FOLLOWING_STEPS)):
        sentence = sentences[index]
        follows = sentence.item if sentences[last].item else not sentence.new_block
        if not (follows and _instruction(sentence)) or sentence.end - sentences[best].start > MAX_QUOTE_CHARS:
            break
        last = index
    return last


def _carried(sentences: Sequence[Sentence], best: int, question: str, wanted: set[str]) -> int:
    """The index of the last sentence the quote carries from ``best`` on; a quote that ends by announcing
    a list ("Limescale slows boiling. To descale:") carries the list too."""
    if _introduces(sentences, best):
        return _announced(sentences, best)
    last = _followed(sentences, best, question, wanted)
    return _announced(sentences, last) if _introduces(sentences, last) else last


def _followed(sentences: Sequence[Sentence], best: int, question: str, wanted: set[str]) -> int:
    """The last sentence that follows ``best`` as part of its answer: the instructions after it for a
    "how" question, else the next sentence when it holds as many of the question's words."""
    if _ASKS_HOW.search(question):
        last = _instructions_after(sentences, best)
        if last > best:
            return last
    following = best + 1
    if following < len(sentences) and not sentences[following].new_block:
        # The next sentence too, when it holds as many of the question's words (and so adds to it).
        held = [len(wanted & _terms_of(s.text)) for s in sentences[best : following + 1]]
        if held[1] and held[1] >= held[0]:
            return following
    return best


def best_quote(question: str, source: str, *, written: str = "", about: str = "") -> Quote | None:
    """The quote a passage gives in answer to ``question`` (as searched for: a follow-up resolved with
    what it refers to), the words of ``written`` (the message as the person wrote it) first, those of
    ``about`` (the titles of what the passage is part of) last; None for a passage without a sentence."""
    sentences = located_sentences(source)
    if not sentences:
        return None
    wanted = _terms_of(question)
    best = _best(sentences, wanted, _terms_of(written or question), _terms_of(about))
    last = _carried(sentences, best, question, wanted)
    start, end = sentences[best].start, sentences[last].end
    text = _rendered(source, start, end)
    if len(text) > MAX_QUOTE_CHARS:
        text = text[:MAX_QUOTE_CHARS].rsplit(" ", 1)[0].rstrip(",;:") + CUT_MARK
    return Quote(text=text, start=start, end=end)
