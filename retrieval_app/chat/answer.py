"""The built-in answer engine, used when no language model is configured: it quotes the passages most
relevant to the question, with their URIs, and says they were retrieved. It never invents a sentence."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from retrieval_app.core.ai import extractive
from retrieval_app.search.hits import Hit


def retrieved_answer(query: str, context: Sequence[Hit], *, retrieval_error: str = "") -> str:
    """The passages most relevant to the query, quoted with their URIs and labelled as retrieved."""
    if not context:
        reason = " (the search itself failed)" if retrieval_error else ""
        return (
            "No language model is configured, so I can only quote what I find, and I found nothing in your "
            f"documents, memories or earlier conversations about this{reason}."
        )
    wanted = set(extractive.terms_of(query))
    lines = ["No language model is configured; these passages were retrieved (not generated) for your question:"]
    for number, hit in enumerate(context[:3], start=1):
        sentences = extractive.split_sentences(hit.content or hit.text) or [hit.text]
        ranked = sorted(range(len(sentences)), key=lambda i: (-len(wanted & set(extractive.terms_of(sentences[i]))), i))
        # A quote is one contiguous span of the source: the best sentence, with the next best only
        # when it stands right beside it.
        span = sorted(ranked[:2]) if len(ranked) > 1 and abs(ranked[0] - ranked[1]) == 1 else ranked[:1]
        quote = " ".join(sentences[i] for i in span).strip()
        where = hit.title or hit.uri
        lines.append(f'{number}. "{quote}" ({where}, {hit.uri})')
    return "\n".join(lines)


def pieces(text: str) -> Iterator[str]:
    """The answer as a stream of words, as a model would send it."""
    yield from re.findall(r"\S+\s*|\s+", text)
