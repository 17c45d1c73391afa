"""The built-in extractive engine: summaries and overviews made of the conversation's own sentences.

It never invents text. Sentences are scored by how much of the conversation's vocabulary they carry
(term frequency weighted by rarity), with bonuses for facts (numbers, dates, names), decisions and
requests, and penalties for pleasantries and near-duplicates. The results are deterministic: the same
turns always give the same summary.
"""

from __future__ import annotations

import html
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


# --- Tiers of documents: sentences about the text -----------------------------------------------------
#
# A document's L0 and L1 say what its text says, in its own words, without the text's markup and
# without presenting its instructions as if they described it: "Repeat this twice." is not what a
# passage is about, while "It says to repeat the first boil twice." is. A list of short items
# is gathered into one sentence ("It has a kettle, a filter and a base."), a table is described as one
# ("For each code it has the meaning: E1, boiled dry; E2, no water."), and questions and bare labels are
# left out. Everything stays deterministic and quotes the text's words; only the framing words of
# those sentences are added.

_MD_IMAGE = re.compile(r"!\[([^\]]*)\]\((?:[^()\s]|\([^()]*\))*(?:\s+\"[^\"]*\")?\)")
_MD_LINK = re.compile(r"\[([^\]]+)\]\((?:[^()\s]|\([^()]*\))*(?:\s+\"[^\"]*\")?\)")
_MD_REF_LINK = re.compile(r"\[([^\]]+)\]\[[^\]]*\]")
_MD_FOOTNOTE = re.compile(r"\[\^[^\]]+\]")
_MD_LINK_DEFINITION = re.compile(r"^\s{0,3}\[[^\]]+\]:\s+\S+.*$")
_AUTOLINK = re.compile(r"<((?:https?|ftp|mailto):[^>\s]+)>")
_HTML_TAG = re.compile(r"<!--.*?-->|</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>", re.DOTALL)
_STRONG = re.compile(r"(\*\*|__|~~)(?=\S)(.+?)(?<=\S)\1")
_ITALIC_STAR = re.compile(r"(?<![\w*\\])\*(?=\S)([^*\n]+?)(?<=\S)\*(?![\w*])")
_ITALIC_UNDERSCORE = re.compile(r"(?<![\w_\\])_(?=\S)([^_\n]+?)(?<=\S)_(?![\w_])")
_CODE_SPAN = re.compile(r"(`+)[ ]?(.+?)[ ]?\1")
_ESCAPED = re.compile(r"\\([\\`*_{}\[\]()#+\-.!|>~])")
_STRAY_MARKS = re.compile(r"\*{2,}|(?<!\w)_{2,}|_{2,}(?!\w)|`+|~~")
_LINE_MARKS = re.compile(r"^\s*(?:#{1,6}(?:\s+|$)|>+\s?|[-*+\u2022\u25aa\u25cf]\s+|\(?\d{1,3}[.)]\s+|[a-z][.)]\s+)")
_CLOSING_HASHES = re.compile(r"\s+#+\s*$")
_TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{2,}:?\s*(?:\|\s*:?-{2,}:?\s*)*\|?\s*$")
_HEADING_NUMBER = re.compile(
    r"^\s*(?:(?:chapter|section|part|step|appendix)\s+(?:\d{1,3}(?:\.\d{1,3})*|[ivxlc]{1,6}|[a-z])[.):]?"
    r"|\d{1,3}(?:\.\d{1,3})*[.)]|\d{1,3}(?:\.\d{1,3})+|(?:[ivxlc]{1,6}|[a-z])[.)])\s+(?=\S)",
    re.IGNORECASE,
)


def _inline_plain(line: str) -> str:
    text = _MD_IMAGE.sub(r"\1", line)
    text = _MD_LINK.sub(r"\1", text)
    text = _MD_REF_LINK.sub(r"\1", text)
    text = _MD_FOOTNOTE.sub("", text)
    text = _AUTOLINK.sub(r"\1", text)
    text = _HTML_TAG.sub(" ", text)
    text = _CODE_SPAN.sub(r"\2", text)
    previous = None
    while previous != text:  # nested emphasis: ***both*** or **bold _and italic_**
        previous = text
        text = _STRONG.sub(r"\2", text)
        text = _ITALIC_STAR.sub(r"\1", text)
        text = _ITALIC_UNDERSCORE.sub(r"\1", text)
    text = _ESCAPED.sub(r"\1", text)
    text = _STRAY_MARKS.sub("", html.unescape(text))
    if "|" in text:
        text = ", ".join(cell.strip() for cell in text.strip().strip("|").split("|") if cell.strip())
    return " ".join(text.split())


def plain_text(text: str) -> str:
    """The words of a text without Markdown or HTML markup: emphasis, code marks, heading marks, link
    syntax (the link's words stay), images (their description stays), tags, entities, list marks and
    table pipes. Line breaks are kept; a line that was only markup is dropped."""
    lines = []
    for raw in (text or "").splitlines():
        if _TABLE_RULE.match(raw) or _MD_LINK_DEFINITION.match(raw) or _FENCE.match(raw):
            continue
        line = _inline_plain(_CLOSING_HASHES.sub("", _LINE_MARKS.sub("", raw)))
        if line:
            lines.append(line)
    return "\n".join(lines)


def heading_words(title: str) -> str:
    """A heading as words in a sentence: "7. Warranty" -> "Warranty", "**Safety**:" -> "Safety"."""
    text = _inline_plain(title or "")
    stripped = _HEADING_NUMBER.sub("", text)
    return (stripped if len(_WORDS.findall(stripped)) else text).rstrip(" :;,.-")


# Verbs a manual, a guide or a policy gives orders with ("Press the button.", "Repeat this twice.").
_IMPERATIVE_TEXT = """
accept access activate add adjust align allow apply arrange ask assemble attach avoid bake be boil book
bring browse brush buy calibrate call cancel change charge check choose clean clear click close collect
come complete configure confirm connect consult contact continue copy cover create cut decide delete
descale detach disable discard disconnect dispose do download drag drain draw drink drop dry eat email
empty enable ensure enter fasten fill find finish fit fix fold follow forget get give go grab hand hang
heat help hold identify ignore imagine include insert install keep label lay leave let lift limit list
load locate lock log look lower make mark measure mind mix monitor mount move name navigate note notify
obtain open order pack pair paste pay pick place plan plug point position pour power prepare press
prevent print protect pull push put raise read reboot record refer refill register release reload
remember remove rename repeat replace report request reset restart restore return review rinse rotate
run save scan scroll secure see select send set share shake shut sign slide soak sort specify spray
start stay steam stir stop store submit swap switch sync take tap tell test tick tighten toggle try turn
type unclip undo unlock unpack unplug unscrew update upgrade upload use verify visit wait wash watch wear
wipe wrap write
"""
_IMPERATIVE_VERBS = frozenset(_IMPERATIVE_TEXT.split())
# What follows an imperative verb (its object or a particle), and what never does (a verb after a noun).
_OBJECT_START_TEXT = """
the a an this that these those it its them him her your you yourself all any each every both some
one two three four five six seven eight nine ten no only up down out off on in into onto over back
away through to for with from at by again twice once here there how what which whether if when
carefully gently firmly slowly quickly immediately thoroughly well and or our my their his more less
about around until before after as sure
"""
_OBJECT_STARTS = frozenset(_OBJECT_START_TEXT.split())
_NOT_AFTER_IMPERATIVE_TEXT = (
    "is are was were be been has have had will would can could may might must shall should does did do of 's"
)
_NOT_AFTER_IMPERATIVE = frozenset(_NOT_AFTER_IMPERATIVE_TEXT.split())
_PREPOSITION_TEXT = "to on in into onto with from for at by off up down over under through"
_PREPOSITIONS = frozenset(_PREPOSITION_TEXT.split())
_LEAD_IN = re.compile(
    r"^(?:(?:then|next|now|first|firstly|second|secondly|third|finally|lastly|also|simply|just|please|kindly|"
    r"afterwards|step\s+\d+|optionally)\b[,:]?\s+)+",
    re.IGNORECASE,
)
_SUBORDINATE = re.compile(
    r"^((?:if|when|whenever|once|after|before|while|until|unless|to|in\s+case|as\s+soon\s+as|where|during|"
    r"for|on|in|at|with|without|between|from)\b[^,;:]{1,120}),\s+",
    re.IGNORECASE,
)
# Verbs that open a sentence only as an order, whatever follows: "See the tips.", "Let it cool."
_ORDER_OPENER_TEXT = (
    "see refer visit ensure avoid unplug rinse wipe descale insert choose be let try go keep click tap remove"
)
_ORDER_OPENERS = frozenset(_ORDER_OPENER_TEXT.split())
_COURTESY = re.compile(r"^(?:thank\s+you|thanks|congratulations|welcome|we\s+hope|enjoy)\b", re.IGNORECASE)
_NOTE_THAT = re.compile(r"^(?:please\s+)?(?:note|remember|be\s+aware)\s+that\s+", re.IGNORECASE)
_FIRST_WORDS = re.compile(r"[A-Za-z][\w'\u2019-]*|\d[\d.,]*|[\"'\u201c\u2018(]")


@dataclass(frozen=True)
class _Unit:
    """A piece of a passage as a tier tells it: a statement, an instruction (with the clause it is
    reported as: "to descale the kettle monthly"), a gathered list or table, a question or a fragment."""

    kind: str  # statement, instruction, list, table, question, fragment
    text: str  # as written in a tier
    source: str  # the passage's own words, for weighing it
    clause: str = ""  # an instruction's report: "to ..." or "not to ..." (see ``_reported``)


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[:1].isupper() and not text[1:2].isupper() else text


def _report(sentence: str) -> str:
    """The clause an instruction is reported with ("to press reset if the light flashes", "not to
    overfill it"), or "" if the sentence is not an instruction."""
    text = _LEAD_IN.sub("", sentence.strip()).rstrip(" .!")
    condition = ""
    match = _SUBORDINATE.match(text)
    if match:
        condition, text = match.group(1), text[match.end() :]
    words = [w.lower().replace("\u2019", "'") for w in _FIRST_WORDS.findall(text)[:3]]
    if not words:
        return ""
    first, second = words[0], words[1] if len(words) > 1 else ""
    rest = text.split(None, 1)[1] if " " in text else ""
    if first == "do" and second == "not":
        clause = "not to " + rest.split(None, 1)[1] if " " in rest else ""
    elif first in ("don't", "never"):
        clause = ("not to " if first == "don't" else "never to ") + rest
    elif first == "always" and second in _IMPERATIVE_VERBS:
        clause = "always to " + rest
    elif (
        first in _IMPERATIVE_VERBS
        and second not in _NOT_AFTER_IMPERATIVE
        and (second not in ("and", "or") or (len(words) > 2 and words[2] in _IMPERATIVE_VERBS))  # press and hold
        and (
            first in _ORDER_OPENERS
            or not second
            or second in _OBJECT_STARTS
            or second[0].isdigit()
            or second[0] in "\"'\u201c\u2018("
            or (len(words) > 2 and words[2] in _PREPOSITIONS)
            or text.split(None, 2)[1][:1].isupper()
        )
    ):
        clause = "to " + _lower_first(text)
    else:
        return ""
    if not clause.split(None, 2)[1:] or len(clause.split()) < 2:
        return ""
    return f"{clause} {_lower_first(condition)}".strip() if condition else clause


# How a tier reports the text's instructions: "It says to descale it and not to overfill it."
_REPORT = "It says "


def _reported(clauses: str | Sequence[str]) -> str:
    """Instructions as one sentence without its full stop: "It says to fill it, not to overfill it and
    to boil it"."""
    clauses = [clauses] if isinstance(clauses, str) else list(clauses)
    if len(clauses) > 2 and any("," in clause for clause in clauses):
        return _REPORT + "; ".join(clauses[:-1]) + "; and " + clauses[-1]
    return _REPORT + _join_and(clauses)


def is_instruction(sentence: str) -> bool:
    """Whether a sentence tells the reader to do something ("Press and hold the button.", "If it
    flashes, reset it.", "Never immerse the base.") rather than saying how things are."""
    return bool(_report(sentence))


def _classify(sentence: str) -> _Unit:
    text = _NOTE_THAT.sub("", sentence).strip()
    text = text[:1].upper() + text[1:]
    words = len(_WORDS.findall(text))
    if text.endswith("?"):
        return _Unit("question", text, text)
    if words < 3 or text.endswith((":", ",", ";", "-", "\u2013")):
        return _Unit("fragment", text, text)
    clause = _report(text)
    if clause:
        return _Unit("instruction", f"{_reported(clause)}.", text, clause)
    if not text.endswith((".", "!", '"', "'", ")", "\u201d")) and words < 6:
        return _Unit("fragment", text, text)  # a label or a list item without a verb: "Stainless steel body"
    if text[-1] not in ".!\"')\u201d":
        text += "."
    return _Unit("statement", text, text)


def _join_and(items: Sequence[str]) -> str:
    items = [item for item in items if item]
    if len(items) < 2:
        return items[0] if items else ""
    return f"{', '.join(items[:-1])} and {items[-1]}"


TABLE_UNIT_WORDS = 40
LIST_UNIT_WORDS = 45


def _table_unit(rows: list[list[str]], header: list[str]) -> _Unit:
    described = []
    words = 0
    for row in rows:
        cells = ", ".join(cell for cell in row if cell)
        if not cells:
            continue
        if words + len(cells.split()) > TABLE_UNIT_WORDS and described:
            described.append(f"and {len(rows) - len(described)} more")
            break
        described.append(cells)
        words += len(cells.split())
    columns = [_lower_first(cell) for cell in header if cell]
    # "For each code it has the meaning": the columns named, in words a search does not match on.
    lead = f"For each {columns[0]} it has the {_join_and(columns[1:])}" if len(columns) > 1 else "It has"
    text = f"{lead}: {'; '.join(described)}." if described else f"{lead}."
    return _Unit("table", text, " ".join(header + [cell for row in rows for cell in row]))


def _item_words(item: str) -> str:
    """A list item inside a sentence: "Stainless steel body" -> "stainless steel body", while names
    of two capitalised words ("Lumen App") and acronyms keep their capitals."""
    words = item.rstrip(" .;,").split()
    if len(words) > 1 and words[1][:1].isupper():
        return " ".join(words)
    return _lower_first(" ".join(words))


def _list_unit(items: list[str], intro: str) -> _Unit:
    kept: list[str] = []
    words = 0
    # An empty bullet ("- " or "-  .") names nothing and must not leave a gap in the sentence.
    items = [item for item in items if _item_words(item)]
    for item in items:
        if words + len(item.split()) > LIST_UNIT_WORDS and kept:
            kept.append(f"{len(items) - len(kept)} more")
            break
        kept.append(_item_words(item))
        words += len(item.split())
    lead = intro.rstrip(" :") if intro else "It has"
    listed = f"{lead} {_join_and(kept)}" if kept else lead
    return _Unit("list", f"{listed}.", " ".join([intro, *items]))


def _is_table_row(line: str) -> bool:
    stripped = line.strip()
    return "|" in stripped and (stripped.startswith("|") or stripped.endswith("|") or stripped.count("|") >= 2)


def _cells(line: str) -> list[str]:
    return [_inline_plain(cell) for cell in line.strip().strip("|").split("|")]


class _Passage:
    """Reads a passage line by line into units: paragraphs into sentences, lists into their items
    (short ones gathered), tables into one description; code blocks and headings are left out."""

    def __init__(self) -> None:
        self.units: list[_Unit] = []
        self.paragraph: list[str] = []
        self.items: list[str] = []
        self.rows: list[list[str]] = []
        self.header: list[str] = []

    def read(self, text: str) -> list[_Unit]:
        in_code = False
        for raw in (text or "").splitlines():
            if _FENCE.match(raw):
                self.flush()
                in_code = not in_code
            elif not in_code:
                self.line(raw)
        self.flush()
        return self.units

    def line(self, raw: str) -> None:
        line = raw.strip()
        if not line:
            self.flush_paragraph()
            self.flush_table()
        elif _TABLE_RULE.match(line):
            if len(self.rows) == 1 and not self.header:
                self.header = self.rows.pop()  # the row above a Markdown table's rule names its columns
        elif _is_table_row(line):
            self.flush_paragraph()
            self.flush_list()
            self.rows.append([cell for cell in _cells(line)])
        elif _BULLET.match(raw):
            self.flush_paragraph()
            self.flush_table()
            self.items.append(_inline_plain(_BULLET.sub("", raw)))
        elif self.items and raw[:1] in " \t":
            self.items[-1] += " " + _inline_plain(line)  # an item's continuation line
        else:
            self.flush_list()
            self.flush_table()
            if not _HEADING.match(line) and not _MD_LINK_DEFINITION.match(line):
                self.paragraph.append(line)

    def flush(self) -> None:
        self.flush_paragraph()
        self.flush_list()
        self.flush_table()

    def flush_paragraph(self) -> None:
        if self.paragraph:
            for sentence in split_sentences("\n".join(self.paragraph)):
                clean = _inline_plain(sentence)
                if clean:
                    self.units.append(_classify(clean))
            self.paragraph.clear()

    def flush_table(self) -> None:
        if self.rows or self.header:
            self.units.append(_table_unit(self.rows, self.header))
        self.rows, self.header = [], []

    def flush_list(self) -> None:
        if not self.items:
            return
        last = self.units[-1] if self.units else None
        intro = self.units.pop().text if last and last.kind == "fragment" and last.text.endswith(":") else ""
        gathered: list[str] = []
        for item in self.items:
            unit = _classify(item)
            if unit.kind == "fragment" or (unit.kind == "statement" and not item.rstrip().endswith((".", "!"))):
                gathered.append(item)
                continue
            if gathered:
                self.units.append(_list_unit(gathered, intro))
                gathered, intro = [], ""
            self.units.append(unit)
        if gathered:
            self.units.append(_list_unit(gathered, intro))
        self.items = []


def passage_units(text: str) -> list[_Unit]:
    return _Passage().read(text)


# What an overview tells: statements, lists, tables and (reported) instructions, each chosen by what it
# says, as the rolling summary chooses sentences; questions and bare labels are left out.
_TOLD = frozenset(("statement", "list", "table", "instruction"))


def _render(units: Sequence[_Unit]) -> str:
    """The units in order as one paragraph; instructions in a row are reported together."""
    out: list[str] = []
    pending: list[str] = []

    def flush() -> None:
        if pending:
            out.append(f"{_reported(pending)}.")
            pending.clear()

    for unit in units:
        if unit.kind == "instruction" and ";" not in unit.clause:
            pending.append(unit.clause)
            continue
        flush()
        out.append(unit.text)
    flush()
    return " ".join(out)


def _cut(text: str, max_words: int) -> str:
    """``text`` within ``max_words``: whole if it fits, else up to a clause boundary or a word, with " ..."."""
    words = text.split()
    if len(words) <= max_words:
        return text
    head = " ".join(words[:max_words])
    boundary = max(head.rfind(", "), head.rfind("; "), head.rfind(" - "))
    if boundary >= 0 and len(head[:boundary].split()) >= max_words // 2:
        head = head[:boundary]
    return head.rstrip(" ,;:-") + " ..."


def describe_passages(texts: Sequence[str], *, max_words: int) -> str:
    """An overview of passages (a chunk's text, or the overviews of a section's parts): their most
    telling statements, lists, tables and reported instructions, in order, within ``max_words``."""
    units = [unit for text in texts for unit in passage_units(text)]
    pool = [unit for unit in units if unit.kind in _TOLD] or [u for u in units if u.kind == "question"]
    if not pool:
        fallback = " ".join(plain_text("\n".join(texts)).split())
        return _cut(fallback, max_words)
    # Chosen by what they say: the words a report adds ("It says to") are paid for once rendered.
    sentences = [
        Sentence(text=unit.source, role="summary", turn=0, position=index, terms=terms_of(unit.source))
        for index, unit in enumerate(pool)
    ]
    weights = term_weights(sentences)
    budget = max_words
    while budget > 0:
        chosen = select(sentences, weights, max_words=budget)
        if not chosen:
            break
        overview = _render([pool[s.position] for s in chosen])
        overflow = len(overview.split()) - max_words
        if overflow <= 0:
            return overview
        budget -= overflow
    best = max(sentences, key=lambda s: (sentence_score(s, weights), -s.position))
    return _cut(pool[best.position].text, max_words - 1)


_REPORTED_CLAUSE = re.compile(r"(?:^It says |, |; and |; | and )(not |never |always )?to ")
_UNREPORTED = {"not ": "Do not ", "never ": "Never ", "always ": "Always "}


def _as_written(sentence: str) -> str:
    """A sentence of an overview as the text wrote it: reported instructions become the instructions
    again, one sentence each ("It says to fill it and not to overfill it." -> "Fill it. Do not
    overfill it.")."""
    if not sentence.startswith(tuple(_REPORT + lead for lead in ("to ", "not to ", "never to ", "always to "))):
        text = sentence.removeprefix("It has ")
        return text[:1].upper() + text[1:]
    clauses = _REPORTED_CLAUSE.split(sentence.rstrip("."))
    written = []
    # split() gives the text before the first clause (nothing), then, per clause, its negation or
    # "always", and its words.
    for negation, words in zip(clauses[1::2], clauses[2::2], strict=True):
        lead = _UNREPORTED.get(negation or "", "")
        text = f"{lead}{words}" if lead else words[:1].upper() + words[1:]
        written.append(text.rstrip(" ,;") + ".")
    return " ".join(written)


def as_said(overview: str) -> str:
    """An overview as the text says it, without the words the tiers add for its readers: "It says to
    fill it and not to overfill it." -> "Fill it. Do not overfill it." A vector is made from this, so
    that it carries what the text says, not how it is told."""
    return " ".join(_as_written(sentence) for sentence in re.split(r"(?<=[.!?])\s+", overview or "") if sentence)


_TOLD_ABOUT = (_REPORT, "It has ", "For each ")


def lead_statement(overview: str, *, max_words: int) -> str:
    """The most informative statement of an overview, within ``max_words``: a sentence that says how
    things are, not an instruction, a question or a list; failing that, its first sentence."""
    sentences = [s for s in split_sentences(plain_text(overview)) if len(_WORDS.findall(s)) >= 2]
    if not sentences:
        return ""
    scored = [
        Sentence(text=text, role="summary", turn=0, position=index, terms=terms_of(text))
        for index, text in enumerate(sentences)
    ]
    candidates = [
        s
        for s in scored
        if _classify(s.text).kind == "statement"
        and not s.text.startswith(_TOLD_ABOUT)
        and not _COURTESY.match(s.text)
        and s.text.split(None, 1)[0].lower() not in _IMPERATIVE_VERBS
        and s.words >= 4
    ]
    if not candidates:
        return _cut(sentences[0], max_words)
    weights = term_weights(scored)

    def worth(s: Sentence) -> tuple[float, int]:
        fits = 1.0 if s.words <= max_words else 0.7  # a sentence told whole reads better than a cut one
        return sentence_score(s, weights) * fits, -s.position

    return _cut(max(candidates, key=worth).text, max_words)


def plain_sentences(text: str) -> list[str]:
    """A written text's lines without markup, each ending like a sentence (a list item or a heading
    line gets its full stop), so that joined they still read as sentences."""
    lines = plain_text(text).splitlines()
    return [line if line.endswith((".", "!", "?", ":", ";", '"', ")")) else f"{line}." for line in lines]


ABSTRACT_TITLE_WORDS = 12


def abstract_title(title: str) -> str:
    """How a section's or document's abstract names it: its heading's words, at most
    ``ABSTRACT_TITLE_WORDS`` of them."""
    return " ".join(heading_words(title).split()[:ABSTRACT_TITLE_WORDS])


# --- What a conversation is about: its main noun phrases ----------------------------------------------

_CONVERSATION_VERB_TEXT = """
be have do say get make go know take see come think look want give use find tell ask work seem feel try
leave call need become keep let begin help show hear play run move live believe hold bring happen write
provide sit stand lose pay meet include continue set learn change lead understand watch follow stop create
speak read allow add spend grow open walk win offer remember love consider appear buy wait serve die send
expect build stay fall cut reach kill remain suggest raise pass sell require report decide pull prefer
plan book fix fail break crash load save enable disable partition remind prepare travel visit cook eat
drink like hate hope wish mean guess agree worry share join start finish check cancel arrive return happen
appreciate sponsor schedule deploy announce draft mention connect refresh finish track review own manage
miss enjoy recommend double tidy sort handle organise organize arrange attend renew expire drive fly land
"""
_CONVERSATION_VERBS = frozenset(_CONVERSATION_VERB_TEXT.split()) | _IMPERATIVE_VERBS
_DETERMINER_TEXT = "a an the my our your his her their its this that these those some any every each another no"
_DETERMINERS = frozenset(_DETERMINER_TEXT.split())
# Words that say when, not what: "last month" is not what a conversation was about.
_TIME_TEXT = """
last next previous following ago today tomorrow yesterday tonight morning afternoon evening night day days
week weeks weekend month months year years time times moment minute minutes hour hours second seconds
monday tuesday wednesday thursday friday saturday sunday january february march april may june july august
september october november december soon later earlier recently now
"""
_TIME_WORDS = frozenset(_TIME_TEXT.split())
# Heads too general to be a subject by themselves.
_GENERIC_TEXT = """
question questions answer answers issue issues problem problems thing things stuff lot lots bit way ways idea
ideas help point part case example sense matter kind sort name fact detail details info information one
track care couple rest number amount type most
"""
_GENERIC_WORDS = frozenset(_GENERIC_TEXT.split())
_NOT_ADVERB_TEXT = (
    "family supply reply italy july assembly apply rally fly jelly belly holy daily nightly weekly monthly yearly"
)
_NOT_ADVERBS = frozenset(_NOT_ADVERB_TEXT.split())
_ADJECTIVE_END = re.compile(r"(?:ic|ous|ful|ive|able|ible|less|ish)$")
_PHRASE_PREPOSITION_TEXT = "of to for"
# Nouns that "to" completes into one subject: "move to Lisbon", "trip to Porto"; not "Porto to the trip".
_TOWARDS_TEXT = (
    "move moving trip visit flight flights journey travel transfer switch migration upgrade return road route"
)
_TOWARDS = frozenset(_TOWARDS_TEXT.split())
# Words that praise or place a thing rather than name it: "good puff pastry" is about puff pastry.
_VAGUE_TEXT = (
    "good great nice best better new old little big small other same different whole few several right main "
    "closer sooner cheaper bigger smaller worth usual"
)
_VAGUE = frozenset(_VAGUE_TEXT.split())
_PHRASE_PREPOSITIONS = frozenset(_PHRASE_PREPOSITION_TEXT.split())
_TOKEN = re.compile(
    r"\d+(?:st|nd|rd|th)\b|[A-Za-z][A-Za-z0-9'\u2019+&-]*[A-Za-z0-9+]|[A-Za-z]|\d[\d,.:/-]*\d|\d|[^\sA-Za-z0-9]"
)
# "allergic to peanuts" -> "peanut allergy"; "moving to Lisbon" -> "move to Lisbon": what happened, named.
_EVENTS = (
    (re.compile(r"\ballergic\s+to\s+(?:the\s+)?([A-Za-z][\w-]*(?:\s+[A-Za-z][\w-]*)?)", re.I), "{} allergy", True),
    (re.compile(r"\bintolerant\s+(?:to|of)\s+([A-Za-z][\w-]*)", re.I), "{} intolerance", True),
    (
        re.compile(
            r"\b(?:mov(?:e|ed|es|ing)|relocat(?:e|ed|es|ing))\s+(?:back\s+)?to\s+([A-Z][\w-]*(?:\s+[A-Z][\w-]*)?)"
        ),
        "move to {}",
        False,
    ),
)


def _verb_like(word: str) -> bool:
    lower = word.lower()
    if lower in _CONVERSATION_VERBS:
        return True
    for suffix, back in (("ing", ""), ("ing", "e"), ("ed", ""), ("ed", "e"), ("d", ""), ("ies", "y"), ("es", "")):
        if lower.endswith(suffix) and len(lower) > len(suffix) + 2:
            base = lower[: -len(suffix)] + back
            if base in _CONVERSATION_VERBS or (
                len(base) > 3 and base[-1] == base[-2] and base[:-1] in _CONVERSATION_VERBS
            ):
                return True
    return lower.endswith("ed") and len(lower) > 5


def _third_person(word: str) -> bool:
    lower = word.lower()
    return lower.endswith("s") and (lower[:-1] in _CONVERSATION_VERBS or lower[:-2] in _CONVERSATION_VERBS)


def _noun_runs(text: str) -> list[list[str]]:
    """Runs of words that can make a noun phrase, in order; each run ends where a verb, a function word
    or punctuation stands. A verb right after a determiner is a noun ("our move", "the plan")."""
    runs: list[list[str]] = [[]]
    after_determiner = False
    for token in _TOKEN.findall(text):
        lower = token.lower().replace("\u2019", "'")
        run = runs[-1]
        if lower in _DETERMINERS:
            if not (len(run) == 1 and run[0] in _PHRASE_PREPOSITIONS):  # "to the office" stays one phrase
                runs.append([])
            after_determiner = True
            continue
        content = token[0].isalnum() and lower not in STOPWORDS and lower not in _TIME_WORDS and lower not in _VAGUE
        adverb = lower.endswith("ly") and len(lower) > 4 and lower not in _NOT_ADVERBS
        starts = not run or (len(run) == 1 and run[0] in _PHRASE_PREPOSITIONS)
        verb = _verb_like(token) and not (after_determiner and starts) and not (token[0].isupper() and run)
        if content and not adverb and not verb and not (run and _third_person(token)):
            run.append(token)
        elif token.lower() in _PHRASE_PREPOSITIONS and run:
            runs.append([token.lower()])  # a preposition may join two phrases: "move to Lisbon"
        else:
            runs.append([])
        after_determiner = False
    return runs  # empty runs mark where a phrase was broken off, so only neighbours join


def _phrases_of(text: str) -> list[str]:
    """Noun phrases of a sentence: "Our nightly Airflow DAG fails with a timeout error" -> "nightly
    Airflow DAG", "timeout error"; "the cost of the flight" -> "cost of the flight"."""
    found: list[str] = []
    runs = _noun_runs(text)
    for index, run in enumerate(runs):
        if not run:
            continue
        if run[0] in _PHRASE_PREPOSITIONS:
            head = runs[index - 1] if index else []
            short = len(head) + len(run) <= TOPIC_MAX_WORDS - 2
            if len(run) > 1 and head and head[0] not in _PHRASE_PREPOSITIONS and short and _joins(head, run[0]):
                found.append(" ".join(head + run))
            if len(run) > 1:
                found.append(" ".join(run[1:]))
            continue
        found.append(" ".join(run))
    return [_without_leading_number(phrase) for phrase in found if _is_subject(phrase)]


def _joins(head: list[str], preposition: str) -> bool:
    """Whether "<head> <preposition> ..." is one subject: "cost of the flight", "deadline for Heron",
    "move to Lisbon", but not "allergic to peanuts" or "keep track of".)"""
    last = head[-1].lower()
    if _ADJECTIVE_END.search(last) or last in _GENERIC_WORDS or (head[0][0].isdigit() and len(head) == 1):
        return False
    return preposition != "to" or last in _TOWARDS


def _without_leading_number(phrase: str) -> str:
    """ "8,000 for kitchen renovation" -> "kitchen renovation"; "1000 IU of vitamin D" stays whole."""
    words = phrase.split()
    if len(words) > 2 and words[0][0].isdigit() and words[1] in _PHRASE_PREPOSITIONS:
        return " ".join(words[2:])
    return phrase


def _is_subject(phrase: str) -> bool:
    words = [w.lower() for w in phrase.split() if w.lower() not in _PHRASE_PREPOSITIONS]
    if not words or all(w[0].isdigit() for w in words):
        return False
    if all(w in _GENERIC_WORDS or w in _TIME_WORDS for w in words):
        return False
    return not all(_ADJECTIVE_END.search(w) and not w[0].isdigit() for w in words)


def _singular(word: str) -> str:
    lower = word.lower()
    if lower.endswith("ies") and len(lower) > 4:
        return word[:-3] + "y"
    if lower.endswith("s") and not lower.endswith(("ss", "us", "is")) and len(lower) > 3:
        return word[:-1]
    return word


def _event_phrases(text: str) -> list[tuple[str, str]]:
    """(the phrase, the words it names) for what happened: ("peanut allergy", "allergic to peanuts")."""
    found = []
    for pattern, form, singular in _EVENTS:
        for match in pattern.finditer(text):
            words = [w for w in match.group(1).split() if w.lower() not in STOPWORDS and w.lower() not in _TIME_WORDS]
            if words:
                words[-1] = _singular(words[-1]) if singular else words[-1]
                found.append((form.format(" ".join(words)), match.group(0)))
    return found


TOPIC_PHRASES = 2
TOPIC_MAX_WORDS = 8
SECOND_TOPIC_SHARE = 0.35
USER_PHRASE_BONUS = 1.2
EVENT_PHRASE_BONUS = 1.5
LEAD_PHRASE_BONUS = 1.3
PART_SHARE = 0.5


def _case_in(phrase: str, lowered: set[str]) -> str:
    """A phrase with its words in the case the conversation writes them: a capitalised word the
    conversation also writes in lower case was capitalised only for opening a sentence; a name keeps
    its capital ("Raj Patel", "Lisbon")."""
    return " ".join(
        w.lower() if w[:1].isupper() and w[1:].islower() and w.lower() in lowered else w for w in phrase.split()
    )


def _phrase_scores(
    sentences: Sequence[Sentence], weights: dict[str, float], lead: Sentence | None
) -> tuple[dict[frozenset, float], dict[frozenset, Counter], dict[frozenset, int]]:
    """Each phrase's weight: its words' weight (from the words it was said with), growing with how
    often it comes back, more when the user said it or it opens the conversation's request; a phrase
    also gains half of what its parts alone weigh ("nightly export job" from "export")."""
    best: dict[frozenset, float] = {}
    first: dict[frozenset, int] = {}
    counts: Counter = Counter()
    surfaces: dict[frozenset, Counter] = {}
    for sentence in sentences:
        candidates = [(p, p, 1.0) for p in _phrases_of(sentence.text)]
        candidates += [(p, said, EVENT_PHRASE_BONUS) for p, said in _event_phrases(sentence.text)]
        for phrase, said, bonus in candidates:
            key = frozenset(stem(_singular(t)) for t in terms_of(phrase)) - _TIME_WORDS
            source = set(terms_of(said)) - _TIME_WORDS
            if not key or not source:
                continue
            weight = sum(weights.get(term, 0.0) for term in source) / math.sqrt(len(source))
            weight *= bonus * (USER_PHRASE_BONUS if sentence.role == "user" else 1.0)
            weight *= LEAD_PHRASE_BONUS if sentence is lead else 1.0
            best[key] = max(best.get(key, 0.0), weight)
            first.setdefault(key, sentence.position)
            counts[key] += 1
            surfaces.setdefault(key, Counter())[phrase] += 1
    scores = {key: weight * (1 + math.log(counts[key])) for key, weight in best.items()}
    for key in scores:
        scores[key] += PART_SHARE * sum(score for part, score in best.items() if part < key)
    return scores, surfaces, first


def topic_phrase(sentences: Sequence[Sentence], weights: dict[str, float], *, lead: Sentence | None = None) -> str:
    """A short phrase saying what a conversation was about, made of its main noun phrases ("Nightly
    export job and memory error", "Peanut allergy and move to Lisbon"), never a list of stems. ``lead``
    is the sentence that says what the conversation was for; its phrases weigh more."""
    scores, surfaces, first = _phrase_scores(sentences, weights, lead)
    if not scores:
        return ""
    lowered = {token for sentence in sentences for token in _TOKEN.findall(sentence.text) if token.islower()}
    ranked = sorted(scores.items(), key=lambda item: (-item[1], sorted(item[0])))
    chosen = [ranked[0][0]]
    for key, score in ranked[1:]:
        if len(chosen) >= TOPIC_PHRASES or score < SECOND_TOPIC_SHARE * ranked[0][1]:
            break
        if not any(_near(key, other) for other in chosen):
            chosen.append(key)
    # Told in the order the conversation came to them.
    chosen.sort(key=lambda key: first[key])
    phrases = [_case_in(surfaces[key].most_common(1)[0][0], lowered) for key in chosen]
    topic = " and ".join(phrases)
    if len(topic.split()) > TOPIC_MAX_WORDS:
        topic = phrases[0]
    return topic[:1].upper() + topic[1:]


def _near(a: frozenset, b: frozenset) -> bool:
    """Two phrases about the same thing: "peanut allergy" and "peanut" share a stem once singular."""

    def parts(key: frozenset) -> set[str]:
        return {stem(_singular(piece)) for term in key for piece in term.split("-") if len(piece) > 2}

    return bool(parts(a) & parts(b))


def shorten(text: str, max_words: int) -> str:
    """``text`` within ``max_words``, cut at a clause or a word with " ..." when it is longer."""
    return _cut(text, max_words)
