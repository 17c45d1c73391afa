"""What this app tells the layers above it, which it does not import."""

from django.dispatch import Signal

# Sent inside the deleting transaction with ``document_id``: whatever keeps a reference to the
# document (search traces) removes it then, so nothing points at a document that is gone.
document_deleted = Signal()
