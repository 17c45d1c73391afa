"""Request parsers for the API, and the one rule for what text and JSON can be stored.

The rule (``text_problem``, ``json_problem``) is applied at every door: by the parser to a whole JSON
body, by the serializers' validators (``foundation.api.storable_text``, ``foundation.api.storable_json``) to each
field that is kept, by the websocket to each frame, and by the admin to what an operator types."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings
from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from foundation.exceptions import TooLargeError

# How deep a JSON value that is kept (a session's or a message's metadata) may nest: deeper than any
# record of facts needs, shallow enough that every page and encoder that shows it stays far from
# Python's recursion limit.
JSON_VALUE_MAX_DEPTH = 32
# How deep a whole request body may nest: a kept value, plus the few levels of the body around it.
JSON_BODY_MAX_DEPTH = 64
# What stands in, when a value is shown, for the part of it nested too deep to show.
DEPTH_NOTE = "(nested deeper than {max_depth} levels; not shown)"
# How much of a path an error message repeats (the path is made of the client's own keys).
_PATH_MAX_CHARS = 200


def refuse_oversized(parser_context, *, limit: int, error: type[TooLargeError] = TooLargeError) -> None:
    """Refuses a request from its declared length, before its body is read, so one request cannot
    fill the server's memory (Django's own upload limits do not cover DRF's parsers)."""
    request = (parser_context or {}).get("request")
    length = int(request.META.get("CONTENT_LENGTH") or 0) if request is not None else 0
    if length > limit:
        raise error(f"The request body is {length} bytes; the limit is {limit}.", details={"limit_bytes": limit})


def text_problem(text: str) -> str:
    """What keeps ``text`` from being stored, in words, or "" when nothing does.

    PostgreSQL's text and JSON columns cannot hold a NUL character, and no UTF-8 text can hold a lone
    UTF-16 surrogate (what JSON's "\\ud800" escape decodes to): either would fail the write, or worse,
    be kept somewhere lenient (Redis) and fail every later read that passes it on."""
    if "\x00" in text:
        return "must not contain NUL characters"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "must not contain a lone UTF-16 surrogate (an unpaired \\uD800-\\uDFFF escape)"
    return ""


def readable_path(path: str) -> str:
    """A path made of the client's keys, safe to repeat in an answer (and short)."""
    path = path.encode("utf-8", "replace").decode().replace("\x00", "\\u0000")
    return path if len(path) <= _PATH_MAX_CHARS else path[: _PATH_MAX_CHARS - 1] + "…"


def _child_path(path: str, key: Any, in_list: bool) -> str:
    return f"{path}[{key}]" if in_list else (f"{path}.{key}" if path else str(key))


def json_problem(value: Any, *, max_depth: int, nul_allowed: bool = False) -> tuple[str, str] | None:
    """The first place in a parsed JSON value that cannot be stored, as (path, problem in words), or
    None. Keys and strings must be storable text (``text_problem``; NUL characters aside with
    ``nul_allowed``), and objects and arrays may nest at most ``max_depth`` levels (the value itself
    being the first). Walked without recursion, so a value nested past Python's own limit is measured,
    not crashed on."""

    def problem_of(text: str) -> str:
        return text_problem(text.replace("\x00", "") if nul_allowed else text)

    pending: list[tuple[Any, str, int]] = [(value, "", 1)]
    while pending:
        item, path, depth = pending.pop()
        if isinstance(item, str):
            if problem := problem_of(item):
                return path, problem
        elif isinstance(item, dict | list):
            if depth > max_depth:
                return path, f"is nested more than {max_depth} levels deep"
            in_list = isinstance(item, list)
            for key, child in enumerate(item) if in_list else item.items():
                if isinstance(key, str) and (problem := problem_of(key)):
                    return path, f"has a key that {problem}"
                pending.append((child, _child_path(path, key, in_list), depth + 1))
    return None


def json_depth(value: Any, *, stop_after: int) -> int:
    """How many levels of objects and arrays ``value`` nests (a scalar: 0), counted without recursion;
    counting stops once past ``stop_after``."""
    deepest = 0
    pending: list[tuple[Any, int]] = [(value, 1)]
    while pending and deepest <= stop_after:
        item, depth = pending.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            pending.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


def json_within_depth(value: Any, *, max_depth: int = JSON_VALUE_MAX_DEPTH) -> Any:
    """``value`` itself when it nests at most ``max_depth`` levels; otherwise a copy whose deeper objects
    and arrays are replaced by a note saying so. A value stored before its depth was limited can then
    be encoded and shown (Python's encoders recurse, and fail past a thousand levels) instead of failing
    the whole page or answer it is in."""
    if json_depth(value, stop_after=max_depth) <= max_depth:
        return value
    holder: dict[str, Any] = {}
    pending: list[tuple[Any, Any, Any, int]] = [(value, holder, "value", 1)]
    while pending:
        item, parent, key, depth = pending.pop()
        if not isinstance(item, dict | list):
            parent[key] = item
        elif depth > max_depth:
            parent[key] = DEPTH_NOTE.format(max_depth=max_depth)
        else:
            copy: Any = dict.fromkeys(item) if isinstance(item, dict) else [None] * len(item)
            parent[key] = copy
            pending.extend(
                (child, copy, k, depth + 1)
                for k, child in (item.items() if isinstance(item, dict) else enumerate(item))
            )
    return holder["value"]


def _cut_deep_text(text: str, *, max_depth: int) -> str:
    """JSON text whose objects and arrays nested past ``max_depth`` are replaced by a note, found by a
    scan of the text (strings skipped), so that it can be parsed however deep the original nests."""
    note = json.dumps(DEPTH_NOTE.format(max_depth=max_depth))
    out: list[str] = []
    depth, in_string, escaped, cut_from = 0, False, False, None
    for index, char in enumerate(text):
        if in_string:
            in_string, escaped = (in_string, False) if escaped else (char != '"', char == "\\")
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth == max_depth + 1:
                cut_from = index
        elif char in "]}":
            depth -= 1
            if depth == max_depth and cut_from is not None:
                out.append(note)
                cut_from = None
                continue
        if cut_from is None:
            out.append(char)
    return "".join(out)


def json_loads_within_depth(text: str, *, max_depth: int = JSON_VALUE_MAX_DEPTH) -> tuple[Any, bool]:
    """A stored JSON text parsed for showing, and whether it was cut: nested at most ``max_depth``
    levels, deeper parts replaced by a note. Values kept before depth was limited can nest past what
    Python parses or encodes (both recurse, and fail near a thousand levels, fewer deep in a page)."""
    try:
        value = json.loads(text)
    except RecursionError:
        return json.loads(_cut_deep_text(text, max_depth=max_depth)), True
    shown = json_within_depth(value, max_depth=max_depth)
    return shown, shown is not value


def check_storable(data: Any) -> None:
    """Refuses a body (or a websocket frame) holding a lone UTF-16 surrogate anywhere, or nested deeper
    than JSON_BODY_MAX_DEPTH. A surrogate could not even be repeated in the answer; NUL characters are
    refused field by field, by the serializers, so that the answer names the field."""
    found = json_problem(data, max_depth=JSON_BODY_MAX_DEPTH, nul_allowed=True)
    if found is not None:
        path, problem = found
        raise ParseError(f"JSON parse error - {readable_path(path) or 'the body'} {problem}.")


class BoundedJSONParser(JSONParser):
    """A JSON body of at most API_MAX_BODY_BYTES, nested at most JSON_BODY_MAX_DEPTH levels, whose every
    string is valid Unicode."""

    def parse(self, stream, media_type=None, parser_context=None):
        refuse_oversized(parser_context, limit=settings.API_MAX_BODY_BYTES)
        try:
            data = super().parse(stream, media_type, parser_context)
        except RecursionError:
            raise ParseError("JSON parse error - the body is nested too deeply.") from None
        check_storable(data)
        return data
