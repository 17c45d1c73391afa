"""Taking a deleted thing out of the JSON that other rows keep about it (a trace's results and stages, an
answer's citations): every entry that names it goes, whatever the shape of the entry.

A deleted thing is named by ``Needles``: strings that mention it wherever they occur (a document's or a
session's id, which every URI below it carries) and strings that name it only as a whole (a memory's
URI: ``.../memories/facts/12`` must not take ``.../memories/facts/123`` with it).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Q, TextField
from django.db.models.functions import Cast


@dataclass(frozen=True)
class Needles:
    """What names a deleted thing: ``inside`` anywhere in a string, ``whole`` as the whole string."""

    inside: tuple[str, ...] = ()
    whole: tuple[str, ...] = field(default=())

    def __bool__(self) -> bool:
        return bool(self.inside or self.whole)

    def in_string(self, text: str) -> bool:
        return text in self.whole or any(needle in text for needle in self.inside)

    def as_sql_filter(self, *columns: str) -> Q:
        """Rows whose JSON (or text) columns may mention a needle, as one filter on their text: a cheap
        first cut, which ``scrubbed`` then settles exactly."""
        wanted = Q(pk__in=[])
        for column in columns:
            as_text = f"{column}_as_text"
            for needle in self.inside:
                wanted |= Q(**{f"{as_text}__contains": needle})
            for needle in self.whole:
                wanted |= Q(**{f"{as_text}__contains": json.dumps(needle)})
        return wanted

    def annotations(self, *columns: str) -> dict[str, Cast]:
        return {f"{column}_as_text": Cast(column, TextField()) for column in columns}


def mentions(value: Any, needles: Needles) -> bool:
    """Whether a JSON value names the deleted thing anywhere in it."""
    if isinstance(value, str):
        return needles.in_string(value)
    if isinstance(value, dict):
        return any(needles.in_string(str(key)) or mentions(item, needles) for key, item in value.items())
    if isinstance(value, list):
        return any(mentions(item, needles) for item in value)
    return False


def scrubbed(value: Any, needles: Needles) -> Any:
    """``value`` without what names the deleted thing: list entries that mention it are dropped whole
    (a result, a candidate, a citation), so is a dictionary's entry keyed by it (a URI's tier), and a
    string naming it is emptied: the other keys of a dictionary stay, so that readers of the shape are
    not surprised."""
    if isinstance(value, list):
        return [scrubbed(item, needles) for item in value if not mentions(item, needles)]
    if isinstance(value, dict):
        return {key: scrubbed(item, needles) for key, item in value.items() if not needles.in_string(str(key))}
    if isinstance(value, str) and needles.in_string(value):
        return ""
    return value
