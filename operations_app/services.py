"""What operators do across the apps: deleting a user with everything they own, through the erasure
service (``privacy_app.erasure``), so that stored files, document trees and vectors, conversations,
memories, traces, tokens, sign-ins and working sets all go."""

from __future__ import annotations

from django.db.models import Count, Q

from accounts_app.models import ApiToken
from documents_app.models import Document, DocumentNode
from foundation.models import ModelCall
from privacy_app.erasure import ErasureReceipt, user_data_erase
from retrieval_app.models import SearchTrace
from sessions_app.models import Archive, ChatSession, Memory, Message


def user_delete(*, user) -> ErasureReceipt:
    """Deletes ``user`` and all they own; the erasure's receipt. Their model calls stay, anonymised:
    they were made and paid for, and the dashboard's costs must not change when someone leaves."""
    return user_data_erase(user=user, delete_account=True)


def user_deletion_summary(*, users) -> dict[str, int]:
    """How much goes with these users, in counts, for the confirmation page."""
    ids = [user.pk for user in users]
    nodes = DocumentNode.objects.filter(owner_id__in=ids).aggregate(
        nodes=Count("id"), vectors=Count("id", filter=~Q(embedding_model=""))
    )
    return {
        "conversations": ChatSession.objects.filter(owner_id__in=ids).count(),
        "messages": Message.objects.filter(owner_id__in=ids).count(),
        "archives": Archive.objects.filter(owner_id__in=ids).count(),
        "memories": Memory.objects.filter(owner_id__in=ids).count(),
        "documents (and their stored files)": Document.objects.filter(owner_id__in=ids).count(),
        "document nodes": nodes["nodes"],
        "node vectors": nodes["vectors"],
        "search traces": SearchTrace.objects.filter(owner_id__in=ids).count(),
        "API tokens": ApiToken.objects.filter(owner_id__in=ids).count(),
        "model calls kept, anonymised": ModelCall.objects.filter(owner_id__in=ids).count(),
    }
