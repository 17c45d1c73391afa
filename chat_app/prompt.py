"""The prompt of a chat turn: instructions and retrieved context within CHAT_CONTEXT_TOKENS, the
rolling summary of the conversation, then its recent turns verbatim, the turn being answered last."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from django.conf import settings

from foundation import ai
from retrieval_app.hits import Hit
from sessions_app.services import HistoryContext

# Memories noted from the message being answered, handed to the model so it can acknowledge them.
NOTED_PROMPT = (
    "Noted just now from the user's message and saved to their long-term memories (acknowledge briefly "
    "what was noted; do not claim to remember anything else):"
)
SYSTEM_PROMPT = (
    "You are Recollect, an assistant with a memory of the user's documents and earlier conversations. "
    "Answer from the context below when it is relevant and cite the URIs you used in square brackets. "
    "If the context does not hold the answer, say so plainly rather than guessing."
)


@dataclass
class Prompt:
    """The messages for the model, the hits the context kept, and what the budget let in or cut."""

    messages: list[dict[str, str]]
    context: list[Hit]
    tokens: int
    budget: dict[str, Any] = field(default_factory=dict)


def context_block(hits: Sequence[Hit]) -> tuple[str, list[Hit], dict[str, Any]]:
    """The retrieved context within CHAT_CONTEXT_TOKENS: each hit's L1, else its L0; then the full text
    of the best hits while room is left. Returns the block, the hits used, and the budget's record."""
    budget = settings.CHAT_CONTEXT_TOKENS
    used, entries, cut = 0, [], []
    for hit in hits:
        for tier, text in (("L1", hit.overview), ("L0", hit.abstract), ("match_reason", hit.match_reason)):
            tokens = ai.estimate_tokens(text)
            if text and used + tokens <= budget:
                entries.append({"hit": hit, "tier": tier, "text": text})
                used += tokens
                break
        else:
            cut.append({"uri": hit.uri, "tokens": ai.estimate_tokens(hit.overview or hit.abstract)})
    for entry in entries:
        content = entry["hit"].content or ""
        extra = ai.estimate_tokens(content) - ai.estimate_tokens(entry["text"])
        if content and entry["tier"] != "L2" and extra > 0 and used + extra <= budget:
            entry.update(tier="L2", text=content)
            used += extra
    record = {"max_tokens": budget, "used": used, "tiers": {e["hit"].uri: e["tier"] for e in entries}, "cut": cut}
    block = "\n\n".join(f"[{e['hit'].uri}] ({e['tier']}{_when(e['hit'])})\n{e['text']}" for e in entries)
    return block, [e["hit"] for e in entries], record


def _when(hit: Hit) -> str:
    """When an earlier turn was said, so the model can answer "when" and "last May" questions."""
    if not hit.created_at:
        return ""
    try:
        said = datetime.fromisoformat(hit.created_at)
    except ValueError:
        return ""
    return f", said on {said:%A %d %B %Y}"


def prompt_assemble(
    *, message: str, hits: Sequence[Hit], history: HistoryContext, remembered: Sequence[dict[str, Any]] = ()
) -> Prompt:
    """The whole prompt for one turn; ``remembered``, the memories noted from ``message``."""
    context, used, budget = context_block(hits)
    system = SYSTEM_PROMPT
    noted = [memory for memory in remembered if memory.get("change") != "unchanged"]
    if noted:
        system += "\n\n" + NOTED_PROMPT + "".join(f"\n- {memory['content']}" for memory in noted)
    if history.summary:
        system += f"\n\nSummary of the conversation so far:\n{history.summary}"
    system += f"\n\nContext:\n{context}" if context else "\n\nContext: nothing relevant was found."
    messages = [{"role": "system", "content": system}]
    for turn in history.turns:
        if turn.role in ("user", "assistant"):
            messages.append({"role": turn.role, "content": turn.content[: settings.CHAT_MESSAGE_MAX_CHARS]})
    if messages[-1]["role"] != "user":  # the turn being answered is always last
        messages.append({"role": "user", "content": message})
    tokens = sum(ai.estimate_tokens(m["content"]) for m in messages)
    budget.update(
        prompt_tokens=tokens,
        history_turns=len(history.turns),
        summary_tokens=ai.estimate_tokens(history.summary),
    )
    return Prompt(messages=messages, context=used, tokens=tokens, budget=budget)
