"""The built-in answer engine, used when no language model is configured. It never invents a sentence:
it answers a greeting in kind, acknowledges what it noted from a statement (worded from the memories'
own text), and quotes the passages judged relevant to a question, verbatim, with their URIs, saying
they were retrieved rather than generated; when none is relevant, it says what it found nothing about.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import Any

from chat_app import speech
from chat_app.relevance import Judged

# Passages quoted at most in one answer.
MAX_QUOTES = 3
# A quote's later lines (a list it carries) are indented under its number, so Markdown nests them.
QUOTE_INDENT = "   "
WHERE = "your documents, memories or earlier conversations"
CONFIDENT_HEADER = "From your sources, quoted as retrieved (not generated):"
WEAK_HEADER = "Nothing I found clearly answers this; these passages come closest (quoted as retrieved, not generated):"
RELATED_HEADER = "Related, from your sources (quoted as retrieved, not generated):"
SEARCH_FAILED = f"The search failed, so I found nothing to quote from {WHERE} this time."
NOTHING_NOTED = "Saved in this conversation; I noted no fact from it as a long-term memory."
KEEP_CONVERSATION = (
    "To keep this whole conversation, with a summary and what it says about you, press “Remember this "
    "conversation” at the top of the chat. What you tell me about yourself is noted as you say it."
)
GREETING_HINT = f"Ask me about {WHERE}, or tell me something to remember."


def quoted_passages(judged: Sequence[Judged]) -> tuple[list[Judged], bool]:
    """The passages an answer quotes, most relevant first, and whether they are strong: those judged
    relevant enough for a confident answer, else those above the floor (weakly relevant), else none.
    Passages whose quotes repeat one already chosen (overlapping chunks) are left out."""
    ranked = sorted((j for j in judged if j.quotable), key=lambda j: -j.relevance)
    strong = [j for j in ranked if j.strong]
    chosen, seen = [], set()
    for passage in strong or ranked:
        text = " ".join(passage.quote.text.split())
        if text not in seen:
            seen.add(text)
            chosen.append(passage)
    return chosen[:MAX_QUOTES], bool(strong)


def answered_passages(judged: Sequence[Judged], kind: str) -> list[Judged]:
    """The passages the built-in answer to a message of this ``kind`` quotes, and so its sources: a
    question's (see ``quoted_passages``), a statement's only when clearly relevant, a greeting's none."""
    passages, strong = quoted_passages(judged)
    if kind == speech.QUESTION:
        return passages
    return passages if strong and kind == speech.STATEMENT else []


def _listed(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def acknowledgement(remembered: Sequence[dict[str, Any]]) -> str:
    """What was noted, said back: "Noted: you live in Lisbon. I'll keep that in mind."; a fact already
    known is said to be known, an updated one with what it replaces."""
    noted = []
    for memory in remembered:
        said = speech.acknowledged(memory["content"])
        if memory.get("change") == "updated" and memory.get("previous"):
            said += f" (before: {speech.acknowledged(memory['previous'])})"
        if memory.get("change") != "unchanged":
            noted.append(said)
    known = [speech.acknowledged(m["content"]) for m in remembered if m.get("change") == "unchanged"]
    parts = []
    if noted:
        parts.append(f"Noted: {_listed(noted)}. I'll keep that in mind.")
    if known:
        parts.append(f"I already knew that {_listed(known)}.")
    return " ".join(parts)


def _cited(title: str) -> str:
    # The page turns "(title, uri)" into a citation marker; brackets inside the title would break it.
    return re.sub(r"[()\[\]\n]+", " ", title).strip()


# A numbered list that starts past 1 ("2. Boil it once.") cannot interrupt a paragraph in Markdown: right
# after a quote's first line it would be read as that line's run-on text, unless a blank line comes first.
_LATER_STEP = re.compile(r"(?:[2-9]|\d{2,})[.)][ \t]")


def _quoted(text: str) -> str:
    """A quote's text as it goes under its number: its later lines indented, so a list it carries nests."""
    first, _, rest = text.partition("\n")
    if rest and _LATER_STEP.match(rest):
        rest = "\n" + rest
    return "\n".join((first, rest)).replace("\n", "\n" + QUOTE_INDENT) if rest else first


def quotes_block(header: str, passages: Sequence[Judged]) -> str:
    lines = [header]
    for number, passage in enumerate(passages, start=1):
        hit = passage.hit
        lines.append(f'{number}. "{_quoted(passage.quote.text)}" ({_cited(hit.title) or hit.uri}, {hit.uri})')
    return "\n".join(lines)


def retrieved_answer(
    *,
    message: str,
    query: str,
    judged: Sequence[Judged],
    remembered: Sequence[dict[str, Any]] = (),
    retrieval_error: str = "",
) -> str:
    """The built-in engine's answer to ``message`` (searched as ``query``), from the passages judged
    for it and the memories noted from it."""
    kind = speech.message_kind(message)
    passages = answered_passages(judged, kind)
    strong = any(passage.strong for passage in passages)
    parts = []
    if greeting := speech.greeting_reply(message):
        parts.append(greeting + (f" {GREETING_HINT}" if kind == speech.GREETING and greeting == "Hello!" else ""))
    if remembered:
        parts.append(acknowledgement(remembered))
    if speech.asks_to_keep_conversation(message):
        parts.append(KEEP_CONVERSATION)
    elif kind == speech.STATEMENT and not remembered:
        parts.append(NOTHING_NOTED)
    if kind == speech.QUESTION:
        if retrieval_error:
            parts.append(SEARCH_FAILED)
        elif not passages:
            parts.append(f"I found nothing about {speech.topic_of(speech.question_part(query))} in {WHERE}.")
        else:
            parts.append(quotes_block(CONFIDENT_HEADER if strong else WEAK_HEADER, passages))
    elif passages:  # said, not asked: only what is clearly related
        parts.append(quotes_block(RELATED_HEADER, passages))
    return "\n\n".join(parts) or "All right."


def pieces(text: str) -> Iterator[str]:
    """The answer as a stream of words, as a model would send it."""
    yield from re.findall(r"\S+\s*|\s+", text)
