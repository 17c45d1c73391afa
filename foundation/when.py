"""When a question is about: the time span its words name, if any ("on 31 March 2025", "last May",
"in 2024", "three weeks ago"), so that recall can prefer what was said then.

Spans are generous on purpose: what happened on a day is usually talked about in the days before
(plans) and just after (news), so a named day reaches two weeks back and one week forward.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta

MONTHS = {name.lower(): number for number, name in enumerate(calendar.month_name) if name}
MONTHS |= {name.lower(): number for number, name in enumerate(calendar.month_abbr) if name}
MONTHS["sept"] = 9
_MONTH = "(" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\s+(?:of\s+)?{_MONTH}\s*,?\s+(\d{{4}})\b", re.I)
_MONTH_DAY_YEAR = re.compile(rf"\b{_MONTH}\s+(\d{{1,2}})(?:st|nd|rd|th)?\s*,?\s+(\d{{4}})\b", re.I)
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_MONTH_YEAR = re.compile(rf"\b{_MONTH}\s+(\d{{4}})\b", re.I)
_LAST_MONTH_NAME = re.compile(rf"\b(?:in|last|this|during|since)\s+{_MONTH}\b", re.I)
_YEAR = re.compile(r"\b(?:in|during|of)\s+((?:19|20)\d{2})\b", re.I)
_AGO = re.compile(r"\b(a|an|one|two|three|four|five|six|\d+)\s+(day|week|month|year)s?\s+ago\b", re.I)
_LAST = re.compile(r"\b(yesterday|last\s+(?:week|month|year))\b", re.I)
_NUMBERS = {"a": 1, "an": 1, "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6}
BEFORE, AFTER = timedelta(days=14), timedelta(days=7)


@dataclass(frozen=True)
class Span:
    """A time span a question names, as aware datetimes, and the words that named it."""

    start: datetime
    end: datetime
    words: str

    def as_dict(self) -> dict[str, str]:
        return {"start": self.start.isoformat(), "end": self.end.isoformat(), "words": self.words}


def _at(day: date) -> datetime:
    return datetime.combine(day, time.min, tzinfo=UTC)


def _day(day: date, words: str) -> Span:
    return Span(_at(day) - BEFORE, _at(day) + timedelta(days=1) + AFTER, words)


def _month(year: int, month: int, words: str) -> Span:
    last = calendar.monthrange(year, month)[1]
    return Span(_at(date(year, month, 1)) - BEFORE, _at(date(year, month, last)) + timedelta(days=1) + AFTER, words)


def _safe_date(year: int, month: int, day: int) -> date | None:
    try:
        return date(year, month, day)
    except ValueError:
        return None


def needs_now(question: str) -> bool:
    """Whether the span, if any, is relative to the present ("last May", "two weeks ago")."""
    return bool(_LAST_MONTH_NAME.search(question) or _AGO.search(question) or _LAST.search(question))


def span_of(question: str, *, now: datetime | None = None) -> Span | None:
    """The time span ``question`` names, or None. Relative words ("last May") need ``now``: the time
    the question is asked from (for a memory, the latest thing remembered)."""
    for pattern, order in ((_DAY_MONTH_YEAR, "dmy"), (_MONTH_DAY_YEAR, "mdy")):
        if match := pattern.search(question):
            day_text, month_text, year_text = (
                match.groups() if order == "dmy" else (match.group(2), match.group(1), match.group(3))
            )
            day = _safe_date(int(year_text), MONTHS[month_text.lower()], int(day_text))
            if day:
                return _day(day, match.group(0))
    if match := _ISO.search(question):
        day = _safe_date(*map(int, match.groups()))
        if day:
            return _day(day, match.group(0))
    if match := _MONTH_YEAR.search(question):
        return _month(int(match.group(2)), MONTHS[match.group(1).lower()], match.group(0))
    if match := _YEAR.search(question):
        year = int(match.group(1))
        return Span(_at(date(year, 1, 1)) - BEFORE, _at(date(year + 1, 1, 1)) + AFTER, match.group(0))
    if now is None:
        return None
    if match := _LAST_MONTH_NAME.search(question):
        month = MONTHS[match.group(1).lower()]
        year = now.year if month <= now.month else now.year - 1
        return _month(year, month, match.group(0))
    if match := _AGO.search(question):
        count = _NUMBERS.get(match.group(1).lower()) or int(match.group(1))
        days = {"day": 1, "week": 7, "month": 30, "year": 365}[match.group(2).lower()] * count
        center = now - timedelta(days=days)
        return Span(
            center - BEFORE - timedelta(days=days // 4), center + AFTER + timedelta(days=days // 4), match.group(0)
        )
    if match := _LAST.search(question):
        days = {"yesterday": 1, "week": 7, "month": 30, "year": 365}[match.group(1).lower().split()[-1]]
        return Span(now - timedelta(days=2 * days) - timedelta(days=1), now, match.group(0))
    return None


# A question about when something happened, and words that say when it did; recall prefers turns
# holding such words for such questions ("When did she adopt the kitten?" / "We got her last Saturday!").
_ASKS_WHEN = re.compile(
    r"^\s*when\b|\b(?:what|which)\s+(?:date|day|month|year|week|time)\b|\bhow\s+long\s+ago\b|\bsince\s+when\b",
    re.IGNORECASE,
)
_WEEKDAYS = "monday|tuesday|wednesday|thursday|friday|saturday|sunday"
_MONTH_NAMES = "january|february|march|april|may|june|july|august|september|october|november|december"
# Words that say when something happened, as whole words in any case. Recall tests every turn it
# describes (a few hundred), on lower-cased text: a case-insensitive expression took three times as long,
# and PostgreSQL's own more than half of describing them.
_TIME_WORDS = re.compile(
    rf"\b(?:yesterday|today|tonight|tomorrow|ago|weekend|{_WEEKDAYS}|{_MONTH_NAMES}"
    r"|(?:last|next|this|past|coming)\s+(?:week|month|year|night|morning|evening|summer|winter|spring|autumn|fall)"
    r"|[0-9]{1,2}(?:st|nd|rd|th)|(?:19|20)[0-9]{2})\b"
)


def says_when(text: str) -> bool:
    """Whether ``text`` holds a word that says when: a day or month name, "yesterday", "ago", "last
    week", an ordinal ("3rd") or a year ("2023")."""
    return bool(_TIME_WORDS.search(text.lower()))


def asks_when(question: str) -> bool:
    """Whether ``question`` asks when something happened (or will)."""
    return bool(_ASKS_WHEN.search(question))
