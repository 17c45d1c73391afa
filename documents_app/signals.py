"""What this app tells the layers above it, which it does not import."""

from django.dispatch import Signal

# Sent inside the deleting transaction with ``document_id`` and ``owner_id``: whatever keeps a reference to
# the document or quotes it (search traces, answers' sources, working sets) takes it out then, so nothing
# points at or quotes a document that is gone.
document_deleted = Signal()
