"""What operators do across the apps: deleting a user with everything they own, through each app's own
service, so that stored files, document trees and vectors, conversations, memories and working sets all
go, and trace references with them."""

from __future__ import annotations

from django.db import transaction
from django.db.models import Count, Q

from accounts_app.models import ApiToken
from documents_app.models import Document, DocumentNode
from documents_app.services import document_delete
from foundation.models import ModelCall
from retrieval_app.models import SearchTrace
from sessions_app.models import Archive, ChatSession, Memory, Message
from sessions_app.services import session_delete


@transaction.atomic
def user_delete(*, user) -> None:
    """Deletes ``user`` and all they own. Their model calls stay, without an owner: they were made and
    paid for, and the dashboard's costs must not change when someone leaves."""
    for document in Document.objects.filter(owner=user).only("id", "owner_id", "file"):
        document_delete(document=document)  # its file goes once this transaction commits
    for session in ChatSession.objects.filter(owner=user).only("id", "owner_id"):
        session_delete(session=session)
    user.delete()  # the rest (memories not drawn from a session, traces without one, tokens) cascades


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
        "model calls kept without an owner": ModelCall.objects.filter(owner_id__in=ids).count(),
    }
