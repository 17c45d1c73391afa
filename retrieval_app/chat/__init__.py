"""Chat: one turn, answered over three transports (JSON, server-sent events, the websocket).

- ``pipeline``: the turn itself, from the user's message to the recorded answer;
- ``prompt``: the prompt within its token budgets;
- ``relevance``: how relevant each passage found is, judged; ``mood``: how far an answer can be leaned on;
- ``answer``: the built-in answer engine, with ``quotes`` (what it quotes of a passage) and ``speech``
  (what a message is, and how what was noted is said back);
- ``concurrency`` and ``streaming``: cancellation, the bounds on concurrent turns, and the bridge from
  the synchronous turn to async transports;
- ``events``: the event names and their frames.
"""

from retrieval_app.chat.answer import retrieved_answer
from retrieval_app.chat.concurrency import Cancellation
from retrieval_app.chat.events import Event
from retrieval_app.chat.pipeline import ChatRequest, ChatTarget, chat_prepare, chat_reply, chat_turn
from retrieval_app.chat.prompt import SYSTEM_PROMPT
from retrieval_app.chat.streaming import chat_events

__all__ = [
    "SYSTEM_PROMPT",
    "Cancellation",
    "ChatRequest",
    "ChatTarget",
    "Event",
    "chat_events",
    "chat_prepare",
    "chat_reply",
    "chat_turn",
    "retrieved_answer",
]
