"""What a delete leaves behind in a person's other conversations, taken out with it: the citations and
sources their answers keep of a deleted conversation, memory or document."""

from __future__ import annotations

from typing import Any

from foundation.scrub import Needles, scrubbed
from sessions_app.models import Memory, Message
from sessions_app.services.working_set import working_sets_forget

# An answer keeps what it drew on in these keys of its metadata (``context_uris``, ``citations`` with the
# words cited from an earlier conversation, ``remembered`` with the memories noted on its turn).
SOURCE_KEYS = ("context_uris", "citations", "remembered")


def messages_forget(*, owner_id: int, needles: Needles) -> int:
    """Takes what names the deleted thing out of the sources the owner's answers keep; how many answers
    changed. The text of an answer stays as it was said."""
    if not needles:
        return 0
    candidates = (
        Message.objects.filter(owner_id=owner_id)
        .annotate(**needles.annotations("metadata"))
        .filter(needles.as_sql_filter("metadata"))
        .only("id", "metadata")
    )
    changed = []
    for message in candidates:
        metadata = dict(message.metadata)
        for key in SOURCE_KEYS:
            if key in metadata:
                metadata[key] = scrubbed(metadata[key], needles)
        if metadata != message.metadata:
            message.metadata = metadata
            changed.append(message)
    Message.objects.bulk_update(changed, ["metadata"], batch_size=500)
    return len(changed)


def memories_forget_history(*, owner_id: int, needles: Needles) -> int:
    """Takes out of the owner's memories' history the earlier texts that came from a deleted
    conversation (named by their archive); how many memories changed. The memory itself stays when
    another conversation supports it."""
    if not needles:
        return 0
    candidates = (
        Memory.objects.filter(owner_id=owner_id)
        .annotate(**needles.annotations("history"))
        .filter(needles.as_sql_filter("history"))
        .only("id", "history")
    )
    changed = []
    for memory in candidates:
        history = scrubbed(memory.history, needles)
        if history != memory.history:
            memory.history = history
            changed.append(memory)
    Memory.objects.bulk_update(changed, ["history"], batch_size=500)
    return len(changed)


def conversations_forget_document(*, document_id, owner_id: int | None = None, **_: Any) -> None:
    """A deleted document leaves the owner's conversations (``document_deleted``, in the deleting
    transaction): the answers' sources that named it, and the working sets that held it in play."""
    if owner_id is None:
        return
    needles = Needles(inside=(str(document_id),))
    messages_forget(owner_id=owner_id, needles=needles)
    working_sets_forget(owner_id=owner_id, needles=needles)
