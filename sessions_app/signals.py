"""What this app tells the layers above it, which it does not import."""

from django.dispatch import Signal

# Sent inside the deleting transaction with ``owner_id`` and ``needles`` (``foundation.scrub.Needles``
# naming what went): whatever keeps a copy of a deleted conversation or memory elsewhere (search traces)
# takes it out then, so that nothing of it outlives the delete.
session_deleted = Signal()
memory_deleted = Signal()
