"""Requests a chat client makes for itself (a title, tags, follow-up questions, search queries for a
chat): answered, never recorded, searched for or noted as memories.

They are recognised by the header ``X-Recollect-Record: false`` (any client), or by the way Open WebUI
words them: a user message that begins ``### Task:``. With a model configured (LLM_MODEL), the model
answers the client's messages as sent. The built-in engine writes no free text: it answers the JSON
Open WebUI asks for from the chat's own words (the title is the first words of its first question; the
search query is the last question; tags and follow-ups are left empty), and anything else with an empty
answer.
"""

from __future__ import annotations

import json
import re

from foundation import ai
from integrations_app.openai_wire import Completion

TASK_PREFIX = "### Task:"
# How Open WebUI hands a task the chat: "<chat_history>USER: ...\nASSISTANT: ...</chat_history>".
CHAT_HISTORY = re.compile(r"<chat_history>(.*?)</chat_history>", re.DOTALL | re.IGNORECASE)
USER_LINE = re.compile(r"^\s*USER:\s*(.+)$", re.MULTILINE)
# The JSON key a task asks for, as its "### Output:" section shows it: {"title": ...}.
ASKED_KEY = re.compile(r'\{\s*"(title|tags|follow_ups|queries|text)"\s*:')
TITLE_WORDS = 6
# The roles a model is handed (a developer turn is a system turn to most providers).
MODEL_ROLES = {"developer": "system", "tool": "user", "function": "user"}
PURPOSE = "client_task"


def is_client_task(completion: Completion) -> bool:
    return not completion.record or completion.message.lstrip().startswith(TASK_PREFIX)


def _user_lines(prompt: str) -> list[str]:
    history = CHAT_HISTORY.search(prompt)
    return [line.strip() for line in USER_LINE.findall(history.group(1) if history else "")]


def extractive_task_answer(prompt: str) -> str:
    """The built-in answer to a client's task: the JSON it asks for, from the chat's own words."""
    asked = ASKED_KEY.search(prompt)
    if asked is None:
        return ""
    key, said = asked.group(1), _user_lines(prompt)
    if key == "title":
        words = said[0].split() if said else []
        return json.dumps({"title": " ".join(words[:TITLE_WORDS])})
    if key == "queries":
        return json.dumps({"queries": said[-1:]})
    if key == "text":
        return json.dumps({"text": ""})
    return json.dumps({key: []})


def client_task_answer(*, owner, completion: Completion) -> str:
    """The answer to a client's own request; nothing of it is recorded."""
    engine = ai.text_engine()
    if not engine.generates:
        return extractive_task_answer(completion.message)
    messages = [{"role": MODEL_ROLES.get(m["role"], m["role"]), "content": m["content"]} for m in completion.sent]
    return engine.complete(messages, purpose=PURPOSE, owner_id=owner.id)
