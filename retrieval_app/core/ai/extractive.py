"""The built-in extractive engine: summaries and overviews made of the conversation's own sentences.

It never invents text. Sentences are scored by how much of the conversation's vocabulary they carry
(term frequency weighted by rarity), with bonuses for facts (numbers, dates, names), decisions and
requests, and penalties for pleasantries and near-duplicates. The results are deterministic: the same
turns always give the same summary.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

_STOPWORD_TEXT = """
a about above after again against all also am an and any are aren't as at be because been before
being below between both but by can can't cannot could couldn't did didn't do does doesn't doing
don't down during each few for from further get got had hadn't has hasn't have haven't having he
he'd he'll he's her here here's hers herself him himself his how how's i i'd i'll i'm i've if in
into is isn't it it's its itself just let's like me more most mustn't my myself no nor not now of
off on once only or other ought our ours ourselves out over own please same shan't she she'd she'll
she's should shouldn't so some such than that that's the their theirs them themselves then there
there's these they they'd they'll they're they've this those through to too under until up us very
was wasn't we we'd we'll we're we've were weren't what what's when when's where where's which while
who who's whom why why's will with won't would wouldn't yes you you'd you'll you're you've your
yours yourself yourselves ok okay sure thanks thank hi hello hey one two also really maybe want need
know think tell said say going go make made use used using well much many way thing things something
anything
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

# A candidate sentence end: terminal punctuation, closing quotes or brackets, white space, then what
# can open a sentence. Whether it really ends one is decided in ``_sentences_of_paragraph``.
_SENTENCE_END = re.compile(r"[.!?][\"')\]]*\s+(?=[\"'(\[]?[A-Z0-9])")
_BULLET = re.compile(r"^\s*(?:[-*+\u2022]|\d+[.)])\s+")
_HEADING = re.compile(r"^\s{0,3}#{1,6}\s+")
_FENCE = re.compile(r"^\s*(?:```|~~~)")
_STANDS_ALONE = re.compile(r"^.{1,40}(?<![.!?:;,\-])$")
# Words that end with a full stop without ending the sentence.
_ABBREVIATIONS = frozenset(
    (
        *("e.g", "i.e", "etc", "vs", "cf", "al", "approx", "dept", "est", "fig", "no", "nos", "vol", "ch", "sec"),
        *("st", "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "inc", "ltd", "co", "corp", "p", "pp", "ca", "ref"),
        *("jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec"),
        *("mon", "tue", "wed", "thu", "fri", "sat", "sun"),
    )
)
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'+#&.-]*[A-Za-z0-9+#]|[A-Za-z]|\d[\d,.:/-]*\d|\d")
_DIGIT = re.compile(r"\d")
_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december|"
    "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
_DATE = re.compile(
    rf"\b(?:\d{{4}}-\d{{2}}-\d{{2}}|\d{{1,2}}/\d{{1,2}}(?:/\d{{2,4}})?|(?:{_MONTHS})\.?\s+\d{{1,2}}|\d{{1,2}}\s+(?:{_MONTHS})"
    r"|monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|tonight|next (?:week|month|year)"
    r"|\d{1,2}(?::\d{2})?\s?(?:am|pm))\b",
    re.IGNORECASE,
)
_DECISION = re.compile(
    r"\b(?:decided|decide|agreed|agree|will|going to|resolved|solved|fixed|works now|the answer is|you should|"
    r"recommend|suggest|best option|conclusion|so we|let's|plan is|chose|choose|settled)\b",
    re.IGNORECASE,
)
_REQUEST = re.compile(
    r"\?\s*$|^(?:how|what|why|when|where|which|who|can|could|would|should|is|are|do|does|did)\b|"
    r"\b(?:i want|i need|i'd like|i would like|help me|please|can you|could you|looking for|trying to)\b",
    re.IGNORECASE,
)
_TODO = re.compile(
    r"\b(?:todo|to do|need to|needs to|have to|follow up|follow-up|next step|remind me|later|pending|"
    r"not yet|still need|open question|tbd)\b",
    re.IGNORECASE,
)
_PLEASANTRY = re.compile(
    r"^(?:thanks?|thank you|hi|hello|hey|good (?:morning|afternoon|evening)|you're welcome|no problem|"
    r"great|cool|ok(?:ay)?|sure|got it|sounds good|bye|goodbye|cheers)\b[\s!.,]*(?:\w+[\s!.,]*){0,3}$",
    re.IGNORECASE,
)
_CAPITALIZED = re.compile(r"(?<![.!?]\s)(?<!^)\b[A-Z][a-zA-Z0-9]+(?:\s+[A-Z][a-zA-Z0-9]+)*")

SPEAKER = {"user": "User", "assistant": "Assistant", "system": "System", "summary": ""}


@dataclass(frozen=True)
class Sentence:
    text: str
    role: str
    turn: int  # index of the turn it came from; -1 for a previous summary
    position: int  # order within the whole input
    terms: tuple[str, ...] = field(default=())

    @property
    def words(self) -> int:
        return len(self.text.split())


def stem(word: str) -> str:
    word = word.lower().strip("'.-")
    if word.endswith("'s"):
        word = word[:-2]
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 4 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def terms_of(text: str) -> tuple[str, ...]:
    return tuple(
        stem(word)
        for word in _WORD.findall(text)
        if (word.lower() not in STOPWORDS and len(word) > 1) or word.isdigit()
    )


def _paragraphs(text: str) -> list[str]:
    """Blocks of text a sentence never crosses: paragraphs (their hard-wrapped lines joined), headings,
    list items and table rows, each on its own; code blocks are left out."""
    blocks: list[str] = []
    current: list[str] = []
    in_code = False

    def close() -> None:
        if current:
            blocks.append(" ".join(current))
            current.clear()

    for raw in (text or "").splitlines():
        if _FENCE.match(raw):
            close()
            in_code = not in_code
            continue
        line = raw.strip()
        if in_code:
            continue
        if not line:
            close()
        elif _HEADING.match(line) or line.startswith("|"):
            close()
            blocks.append(_HEADING.sub("", line).strip(" |"))
        elif _BULLET.match(line):
            close()
            current.append(_BULLET.sub("", line))
        else:
            if current and _STANDS_ALONE.match(current[-1]) and line[:1].isupper():
                close()  # a short line without punctuation before a capitalised one is a title of its own
            current.append(line)
    close()
    return blocks


def _sentences_of_paragraph(paragraph: str) -> list[str]:
    sentences, start = [], 0
    for end in _SENTENCE_END.finditer(paragraph):
        before = paragraph[start : end.start()].rsplit(" ", 1)[-1].lower().rstrip(".")
        if paragraph[end.start()] == "." and (before in _ABBREVIATIONS or re.fullmatch(r"[a-z]", before)):
            continue  # "e.g. Paris", "Dr. Lee", "J. R. Smith": not the end of a sentence
        sentences.append(paragraph[start : end.end()].strip())
        start = end.end()
    sentences.append(paragraph[start:].strip())
    return [sentence for sentence in sentences if sentence]


def split_sentences(text: str, *, max_chars: int = 400) -> list[str]:
    """The sentences of a text, as its reader sees them: a sentence may run over several hard-wrapped
    lines, never across a paragraph, heading or list item; abbreviations and initials do not end one.
    Each is the source's own words (white space folded); one longer than ``max_chars`` is cut at a
    word, marked with " ..."."""
    sentences = []
    for paragraph in _paragraphs(text):
        for piece in _sentences_of_paragraph(" ".join(paragraph.split())):
            if len(piece) > max_chars:
                cut = piece[:max_chars].rsplit(" ", 1)[0]
                piece = cut.rstrip(",;:") + " ..."
            sentences.append(piece)
    return sentences


_LINK = re.compile(r"\s*[\[(]?\b(?:viking|https?)://[^\s\])]+[\])]?")
_WORDS = re.compile(r"[^\W\d_]{2,}")


def sentences_of(turns: Sequence[tuple[str, str]], *, start_position: int = 0) -> list[Sentence]:
    """The sentences people said, as summaries and overviews use them: links (citations such as
    [viking://...]) are left out, and so is what has fewer than two words once they are."""
    found = []
    position = start_position
    for turn_index, (role, content) in enumerate(turns):
        for sentence in split_sentences(content):
            text = _LINK.sub("", sentence).strip()
            if len(_WORDS.findall(text)) < 2:
                continue
            found.append(Sentence(text=text, role=role, turn=turn_index, position=position, terms=terms_of(text)))
            position += 1
    return found


def term_weights(sentences: Sequence[Sentence]) -> dict[str, float]:
    """Frequency times rarity: terms the conversation keeps returning to, but not in every sentence."""
    frequency = Counter(term for sentence in sentences for term in sentence.terms)
    presence = Counter(term for sentence in sentences for term in set(sentence.terms))
    total = max(len(sentences), 1)
    return {term: (1 + math.log(count)) * math.log(1 + total / presence[term]) for term, count in frequency.items()}


def is_pleasantry(text: str) -> bool:
    return bool(_PLEASANTRY.match(text.strip()))


def sentence_score(sentence: Sentence, weights: dict[str, float]) -> float:
    unique = set(sentence.terms)
    if not unique:
        return 0.0
    score = sum(weights.get(term, 0.0) for term in unique) / (1 + math.log(1 + len(sentence.terms)))
    if _DIGIT.search(sentence.text) or _DATE.search(sentence.text):
        score *= 1.3
    if _CAPITALIZED.search(sentence.text):
        score *= 1.15
    if _DECISION.search(sentence.text):
        score *= 1.25
    if sentence.words < 4:
        score *= 0.4
    if is_pleasantry(sentence.text):
        score *= 0.05
    return score


def _overlap(a: Iterable[str], b: Iterable[str]) -> float:
    a, b = set(a), set(b)
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def select(
    sentences: Sequence[Sentence],
    weights: dict[str, float],
    *,
    max_words: int,
    boost: dict[int, float] | None = None,
    redundancy: float = 0.7,
    label_words: int = 0,
) -> list[Sentence]:
    """The best sentences within ``max_words`` (each costing ``label_words`` more for its speaker
    label), without near-duplicates, in their original order."""
    boost = boost or {}
    ranked = sorted(
        sentences,
        key=lambda s: (-(sentence_score(s, weights) * boost.get(s.position, 1.0)), s.position),
    )
    chosen: list[Sentence] = []
    used = 0
    for sentence in ranked:
        if sentence_score(sentence, weights) <= 0:
            break
        cost = sentence.words + (label_words if SPEAKER.get(sentence.role, "x") else 0)
        if used + cost > max_words:
            continue
        if any(_overlap(sentence.terms, other.terms) >= redundancy for other in chosen):
            continue
        chosen.append(sentence)
        used += cost
    return sorted(chosen, key=lambda s: s.position)


def labelled(sentence: Sentence) -> str:
    speaker = SPEAKER.get(sentence.role, sentence.role.title())
    return f"{speaker}: {sentence.text}" if speaker else sentence.text


def summarize(turns: Sequence[tuple[str, str]], *, previous: str = "", max_words: int = 200) -> str:
    """A summary of ``previous`` (an earlier summary) plus ``turns``, at most ``max_words`` words."""
    carried = [
        Sentence(text=text, role="summary", turn=-1, position=i, terms=terms_of(text))
        for i, text in enumerate(line for line in (previous or "").splitlines() if line.strip())
    ]
    fresh = [
        s
        for s in sentences_of(turns, start_position=len(carried))
        if s.role != "system" and s.words >= 3 and not is_pleasantry(s.text)
    ]
    pool = carried + fresh
    if not pool:
        return ""
    weights = term_weights(pool)
    # Newer turns win ties against what the summary already says, so it follows the conversation.
    boost = {s.position: 1.1 for s in fresh}
    chosen = select(pool, weights, max_words=max_words, boost=boost, label_words=1)
    if not chosen:
        best = max(pool, key=lambda s: (sentence_score(s, weights), -s.position))
        words = best.text.split()[: max_words - 1]
        chosen = [Sentence(text=" ".join(words), role=best.role, turn=best.turn, position=best.position)]
    return "\n".join(labelled(s) for s in chosen)


def _phrases(sentence: Sentence) -> list[str]:
    """Runs of two or three adjacent content words ("sales table", "execution timeout")."""
    runs: list[list[str]] = [[]]
    for word in _WORD.findall(sentence.text):
        if word.lower() in STOPWORDS or word[0].isdigit() or len(word) < 3:
            runs.append([])
        else:
            runs[-1].append(word.lower())
    found = []
    for run in runs:
        for size in (3, 2):
            found += [" ".join(run[i : i + size]) for i in range(len(run) - size + 1)]
    return found


def keywords(sentences: Sequence[Sentence], weights: dict[str, float], *, limit: int) -> list[str]:
    """The conversation's main subjects: repeated names and phrases first, then its heaviest terms."""
    names = Counter()
    phrases = Counter()
    for sentence in sentences:
        for match in _CAPITALIZED.findall(sentence.text):
            if match.lower() not in STOPWORDS and not _DATE.fullmatch(match):
                names[match] += 1
        phrases.update(set(_phrases(sentence)))
    picked: list[str] = []
    seen: set[str] = set()

    def take(candidate: str) -> None:
        parts = {stem(part) for part in candidate.split()}
        if not parts <= seen:
            picked.append(candidate)
            seen.update(parts)

    repeated = [(p, c) for p, c in phrases.items() if c >= 2] + [(n, c) for n, c in names.items() if c >= 2]
    for candidate, _ in sorted(repeated, key=lambda item: (-item[1], -len(item[0]), item[0])):
        if len(picked) >= max(1, limit - 1):
            break
        take(candidate)
    for term, _ in sorted(weights.items(), key=lambda item: (-item[1], item[0])):
        if len(picked) >= limit:
            break
        if term not in seen and not term[0].isdigit() and len(term) > 2 and not _DATE.fullmatch(term):
            picked.append(term)
            seen.add(term)
    return picked
