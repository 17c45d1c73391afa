"""The session working set: what a session is currently about, kept in Redis so every process sees it."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from django.conf import settings
from django.core.cache import cache

from foundation.parsers import text_problem
from foundation.scrub import Needles, scrubbed
from sessions_app.models import ChatSession

logger = logging.getLogger(__name__)


@dataclass
class WorkingSet:
    """What a session is currently about: terms resolved so far, and the documents and sections in play."""

    resolved_terms: dict[str, str] = field(default_factory=dict)
    active_documents: list[str] = field(default_factory=list)
    active_sections: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "resolved_terms": dict(self.resolved_terms),
            "active_documents": list(self.active_documents),
            "active_sections": list(self.active_sections),
        }


MAX_TERMS, MAX_DOCUMENTS, MAX_SECTIONS = 50, 10, 20


def _working_set_key(session_id: str) -> str:
    return f"working-set:{session_id}"


def _working_set_ttl() -> int:
    return max(1, int(settings.SESSION_MEMORY_TTL_HOURS * 3600))


def working_set_get(*, session_id: str) -> WorkingSet:
    """The session's working set, kept alive for SESSION_MEMORY_TTL_HOURS after each access. An expired
    or missing one is simply empty: the session starts fresh."""
    if not settings.ENABLE_SESSION_MEMORY:
        return WorkingSet()
    key = _working_set_key(session_id)
    try:
        data = cache.get(key)
        if data is None:
            return WorkingSet()
        cache.touch(key, _working_set_ttl())
    except Exception:  # Redis down: the session works on without its working set, as after expiry
        logger.warning("working set of session %s unavailable", session_id, exc_info=True)
        return WorkingSet()
    return _readable(data)


def _readable(data: dict[str, Any]) -> WorkingSet:
    """The stored state, without any term or name that could not be passed on: one kept before the API
    refused such text would otherwise fail every later search of the session, renewed at each access."""
    terms = {
        term: meaning
        for term, meaning in data.get("resolved_terms", {}).items()
        if not text_problem(str(term)) and not text_problem(str(meaning))
    }
    return WorkingSet(
        resolved_terms=terms,
        active_documents=[name for name in data.get("active_documents", []) if not text_problem(str(name))],
        active_sections=[name for name in data.get("active_sections", []) if not text_problem(str(name))],
    )


def working_set_update(
    *,
    session_id: str,
    resolved_terms: dict[str, str] | None = None,
    documents: Sequence[str] = (),
    sections: Sequence[str] = (),
) -> WorkingSet:
    """Merges what a turn returned into the working set; the most recent documents and sections first."""
    if not settings.ENABLE_SESSION_MEMORY:
        return WorkingSet()
    current = working_set_get(session_id=session_id)
    terms = {**current.resolved_terms, **(resolved_terms or {})}
    updated = WorkingSet(
        resolved_terms=dict(list(terms.items())[-MAX_TERMS:]),
        active_documents=_most_recent_first(documents, current.active_documents, MAX_DOCUMENTS),
        active_sections=_most_recent_first(sections, current.active_sections, MAX_SECTIONS),
    )
    try:
        cache.set(_working_set_key(session_id), updated.as_dict(), _working_set_ttl())
    except Exception:  # Redis down: this turn's update is lost, nothing else
        logger.warning("could not store the working set of session %s", session_id, exc_info=True)
    return updated


def _most_recent_first(new: Sequence[str], old: Sequence[str], limit: int) -> list[str]:
    merged = list(dict.fromkeys([*new, *old]))
    return merged[:limit]


def working_set_clear(*, session_id: str) -> None:
    try:
        cache.delete(_working_set_key(session_id))
    except Exception:  # it expires by itself
        logger.warning("could not clear the working set of session %s", session_id, exc_info=True)


def working_sets_forget(*, owner_id: int, needles: Needles) -> int:
    """Takes the deleted thing out of the working sets of the owner's sessions that hold it; how many
    changed. Redis down: they are left to expire by themselves (SESSION_MEMORY_TTL_HOURS)."""
    if not needles:
        return 0
    keys = {
        _working_set_key(str(session_id)): session_id
        for session_id in ChatSession.objects.filter(owner_id=owner_id).values_list("id", flat=True)
    }
    try:
        stored = cache.get_many(list(keys)) if keys else {}
        changed = {key: scrubbed(value, needles) for key, value in stored.items()}
        changed = {key: value for key, value in changed.items() if value != stored[key]}
        if changed:
            cache.set_many(changed, _working_set_ttl())
    except Exception:  # it expires by itself
        logger.warning("could not clear a deleted item from the working sets of user %s", owner_id, exc_info=True)
        return 0
    return len(changed)


def working_set_lifetime_s() -> int:
    """How long an untouched working set lives in Redis, in seconds: one that could not be cleared is
    gone by then."""
    return _working_set_ttl()


def working_sets_clear(*, session_ids) -> bool:
    """Clears the working sets of these sessions at once; False if Redis could not be reached (they
    expire by themselves within ``working_set_lifetime_s``)."""
    keys = [_working_set_key(str(session_id)) for session_id in session_ids]
    if not keys:
        return True
    try:
        cache.delete_many(keys)
    except Exception:  # it expires by itself
        logger.warning("could not clear %d working set(s)", len(keys), exc_info=True)
        return False
    return True
