"""What a user stored, made safe for an operator's page: whatever it is (a trace id that is not one,
metadata nested a thousand levels deep before depth was limited, megabytes of it), the page renders."""

from __future__ import annotations

import json
import uuid
from dataclasses import dataclass
from typing import Any

from foundation.parsers import JSON_VALUE_MAX_DEPTH, json_within_depth

# How much of a metadata object a page shows, as indented JSON: enough for any sensible record.
METADATA_SHOWN_CHARS = 20_000
# How much of one value (a mood, a status, a trace id as given) a page shows inline.
VALUE_SHOWN_CHARS = 200


def json_text(value: Any, *, max_chars: int = METADATA_SHOWN_CHARS) -> str:
    """``value`` as indented JSON, cut below JSON_VALUE_MAX_DEPTH levels and after ``max_chars``."""
    text = json.dumps(json_within_depth(value, max_depth=JSON_VALUE_MAX_DEPTH), ensure_ascii=False, indent=2)
    if len(text) > max_chars:
        return f"{text[:max_chars]}\n… ({len(text) - max_chars} more characters not shown)"
    return text


def inline_text(value: Any) -> str:
    """A value shown in a line of text: itself if it is text or a number, else its JSON, cut short."""
    if value is None or value == "":
        return ""
    text = value if isinstance(value, str) else json_text(value, max_chars=VALUE_SHOWN_CHARS)
    return text if len(text) <= VALUE_SHOWN_CHARS else text[: VALUE_SHOWN_CHARS - 1] + "…"


def as_uuid(value: Any) -> str | None:
    """``value`` as a canonical UUID when it is one (the only thing a trace link may be made of)."""
    if not isinstance(value, str):
        return None
    try:
        return str(uuid.UUID(value))
    except ValueError:
        return None


@dataclass
class ShownMetadata:
    """A message's or session's metadata as an operator's page shows it."""

    text: str  # all of it, as indented JSON (cut when very deep or long); "" when empty
    trace_id: str | None  # the trace it names, to link to, when that is a UUID
    trace_text: str  # the trace id as given, shown as text, when it is not a UUID
    mood: str
    status: str


def shown_metadata(metadata: Any) -> ShownMetadata:
    fields = metadata if isinstance(metadata, dict) else {}
    trace = fields.get("trace_id")
    trace_id = as_uuid(trace)
    return ShownMetadata(
        text=json_text(metadata) if metadata else "",
        trace_id=trace_id,
        trace_text="" if trace_id else inline_text(trace),
        mood=inline_text(fields.get("mood")),
        status=inline_text(fields.get("status")),
    )
