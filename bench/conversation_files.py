"""Reading a labelled set of long conversations, one JSON file per conversation (the format of
``bench/recallset`` and ``bench/dialogset``, described in ``bench/recallset/__init__.py``). Every function
returns fresh copies, so a caller may change what it gets without affecting the next caller."""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path


def load(data: Path) -> tuple[dict, ...]:
    """Every conversation file of ``data``, in file order."""
    return tuple(json.loads(path.read_text(encoding="utf-8")) for path in sorted(data.glob("*.json")))


def conversations(loaded: tuple[dict, ...]) -> list[dict]:
    """``{"id", "speakers", "relation", "sessions": [{"index", "date", "turns": [{"speaker", "text"}]}]}``,
    in file order, without their questions."""
    return [{k: copy.deepcopy(v) for k, v in conv.items() if k != "questions"} for conv in loaded]


def questions(loaded: tuple[dict, ...], conversation_id: str | None = None) -> list[dict]:
    """``{"id", "conversation", "kind", "question", "evidence": [[session, turn], ...], "answer"}``."""
    return [
        {"conversation": conv["id"], **copy.deepcopy(q)}
        for conv in loaded
        if conversation_id in (None, conv["id"])
        for q in conv["questions"]
    ]


def fingerprint(loaded: tuple[dict, ...]) -> str:
    """A hash of the whole set, so two runs can be shown to have used the same data."""
    return hashlib.sha256(json.dumps(loaded, sort_keys=True).encode()).hexdigest()[:16]
