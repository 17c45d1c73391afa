"""Erasing a person's data: everything they own or that was made from it, with a receipt that says what
went, by kind and count, and what could not go.

The database part is one transaction: conversations with their messages and vectors, archives,
memories with their history, documents with their nodes and vectors, search traces, API tokens and
sign-in tokens, browser sessions (signed out everywhere; open sockets and streams end, as a revoked
token ends them), invitations they made or came in by, the account request they made, jobs kept for
the workers that name their rows, the admin's log lines about their rows, and the rows any other app
keeps for them by ``owner`` (exports and imports). Their model calls stay for the cost figures, emptied
of everything that tied them to the person (``MODEL_CALLS``). Once it commits, their stored files go
and their working sets are cleared from Redis; what could not be (a file already missing, Redis down) is
in the receipt's ``not_removed``, with when it goes by itself.

By default the account stays, empty and usable (sign in again with the same password); with
``delete_account`` it goes too.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from django.apps import apps
from django.contrib.admin.models import LogEntry
from django.contrib.auth import SESSION_KEY, get_user_model
from django.contrib.contenttypes.models import ContentType
from django.contrib.sessions.models import Session
from django.db import models, transaction
from django.db.models import CharField, Func, IntegerField, Q, Sum
from django.db.models.functions import Cast, Coalesce
from django.utils import timezone
from rest_framework.authtoken.models import Token

from accounts_app.credentials import credentials_changed
from accounts_app.models import AccountRequest, ApiToken, Invitation
from documents_app.models import Document, DocumentNode
from foundation import task_names
from foundation.exceptions import InvalidInputError
from foundation.models import ModelCall, QueuedTask
from foundation.security import PasswordGuessThrottle
from retrieval_app.models import SearchTrace
from sessions_app.models import Archive, ChatSession, Memory, Message
from sessions_app.services import working_set_lifetime_s, working_sets_clear

logger = logging.getLogger(__name__)

# What the receipt says of the model calls: kept for the operators' cost figures, with nothing of the
# person left in them (no owner, no conversation, no error text, which may quote a request).
MODEL_CALLS = "model calls (kept for cost figures, anonymised: no owner, no conversation, no error text)"
ACCOUNT_KEPT, ACCOUNT_DELETED = "kept", "deleted"


class ErasureNotConfirmed(InvalidInputError):
    """An erasure asked for without the person's username as its confirmation."""

    code = "confirmation_required"
    default_message = "Erasing your data cannot be undone: send your username as `confirm` to go ahead."


def erasure_confirmed(*, user, confirm: str) -> None:
    """Refuses an erasure whose ``confirm`` is not the person's username, saying what it would remove."""
    if confirm != user.get_username():
        raise ErasureNotConfirmed(details={"would_remove": user_data_counts(user=user)})


def user_data_counts(*, user) -> dict[str, int]:
    """How much of the person's data there is, by kind: what an erasure would remove (reads only)."""
    return {
        "conversations": ChatSession.objects.filter(owner=user).count(),
        "messages": Message.objects.filter(owner=user).count(),
        "archives": Archive.objects.filter(owner=user).count(),
        "memories": Memory.objects.filter(owner=user).count(),
        "documents": Document.objects.filter(owner=user).count(),
        "document nodes": DocumentNode.objects.filter(owner=user).count(),
        "search traces": SearchTrace.objects.filter(owner=user).count(),
        "API tokens": ApiToken.objects.filter(owner=user).count(),
    }


@dataclass
class ErasureReceipt:
    """What an erasure did: removed (by kind, how many), anonymised, and what could not be removed."""

    user_id: int
    username: str
    started_at: str
    account: str = ACCOUNT_KEPT
    finished_at: str = ""
    removed: dict[str, int] = field(default_factory=dict)
    anonymised: dict[str, int] = field(default_factory=dict)
    not_removed: list[dict[str, Any]] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "user_id": self.user_id,
            "username": self.username,
            "account": self.account,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "removed": dict(self.removed),
            "anonymised": dict(self.anonymised),
            "not_removed": list(self.not_removed),
            "complete": not self.not_removed,
        }


@dataclass
class _Owned:
    """The ids of what the person owns, read once before anything is deleted."""

    session_ids: set[str]
    document_ids: set[str]
    rows: dict[str, set[int]]  # embeddable kind -> ids (for the workers' jobs)
    files: list[tuple[Any, str]] = field(default_factory=list)  # (storage, name) to delete after commit


def user_data_erase(*, user, delete_account: bool = False) -> ErasureReceipt:
    """Erases everything ``user`` owns or that was made from it (and, with ``delete_account``, the
    account); returns the receipt. Files and Redis are cleared once the transaction commits: run outside
    any transaction, the receipt says how that went; inside one, ``not_removed`` says they are pending."""
    receipt = ErasureReceipt(user_id=user.pk, username=user.get_username(), started_at=timezone.now().isoformat())
    with transaction.atomic():
        get_user_model().objects.select_for_update().filter(pk=user.pk).first()
        owned = _owned(user)
        pending = {"kind": "files and working sets", "reason": "removed once the erasing transaction commits"}
        receipt.not_removed.append(pending)
        _erase_rows(user, owned, receipt)
        if delete_account:
            receipt.account = ACCOUNT_DELETED
            user.delete()
        else:
            credentials_changed(user_id=user.pk)  # open sockets and streams check theirs, and end
        transaction.on_commit(lambda: _after_commit(user_id=receipt.user_id, owned=owned, receipt=receipt))
        transaction.on_commit(lambda: receipt.not_removed.remove(pending))
    receipt.finished_at = timezone.now().isoformat()
    return receipt


def _owned(user) -> _Owned:
    documents = list(Document.objects.select_for_update().filter(owner=user).only("id", "file"))
    owned = _Owned(
        session_ids={str(pk) for pk in ChatSession.objects.filter(owner=user).values_list("id", flat=True)},
        document_ids={str(document.pk) for document in documents},
        rows={
            "messages": set(Message.objects.filter(owner=user).values_list("id", flat=True)),
            "archives": set(Archive.objects.filter(owner=user).values_list("id", flat=True)),
            "memories": set(Memory.objects.filter(owner=user).values_list("id", flat=True)),
            "nodes": set(DocumentNode.objects.filter(owner=user).values_list("id", flat=True)),
        },
    )
    owned.files = [(document.file.storage, document.file.name) for document in documents if document.file.name]
    return owned


def _count(receipt: ErasureReceipt, kind: str, deleted: tuple[int, dict] | int) -> None:
    """Adds what a delete removed: its own rows only (``QuerySet.delete`` counts cascades too)."""
    number = deleted if isinstance(deleted, int) else deleted[0]
    if number:
        receipt.removed[kind] = receipt.removed.get(kind, 0) + number


def _erase_rows(user, owned: _Owned, receipt: ErasureReceipt) -> None:
    _count(receipt, "admin log entries about their data", _log_entries_about(user).delete()[0])
    # Traces first: deleting a conversation would take its own traces uncounted.
    _count(receipt, "search traces", SearchTrace.objects.filter(owner=user).delete()[0])
    _erase_conversations(user, receipt)
    _erase_documents(user, receipt)
    receipt.anonymised[MODEL_CALLS] = ModelCall.objects.filter(
        Q(owner=user) | Q(session_id__in=owned.session_ids)
    ).update(owner=None, session_id=None, error="")
    _count(receipt, "jobs kept for the workers", _erase_queued_jobs(owned))
    _erase_access(user, receipt)
    _erase_other_owned_rows(user, owned, receipt)


def _erase_conversations(user, receipt: ErasureReceipt) -> None:
    messages = Message.objects.filter(owner=user)
    archives = Archive.objects.filter(owner=user)
    memories = Memory.objects.filter(owner=user)
    _count(receipt, "message vectors", messages.filter(embedding__isnull=False).count())
    _count(receipt, "archive vectors", archives.filter(embedding__isnull=False).count())
    _count(receipt, "memory vectors", memories.filter(embedding__isnull=False).count())
    entries = Func("history", function="jsonb_array_length", output_field=IntegerField())
    history = memories.aggregate(n=Coalesce(Sum(entries), 0))["n"]
    _count(receipt, "memory history entries", history)
    _count(receipt, "memories", _own_rows(memories.delete(), Memory))
    _count(receipt, "messages", _own_rows(messages.delete(), Message))
    _count(receipt, "archives", _own_rows(archives.delete(), Archive))
    _count(receipt, "conversations", _own_rows(ChatSession.objects.filter(owner=user).delete(), ChatSession))


def _own_rows(deleted: tuple[int, dict[str, int]], model) -> int:
    """The rows of ``model`` itself a delete removed (its total counts the link tables' rows too)."""
    return deleted[1].get(model._meta.label, 0)


def _erase_documents(user, receipt: ErasureReceipt) -> None:
    nodes = DocumentNode.objects.filter(owner=user)
    _count(receipt, "document node vectors", nodes.filter(embedding__isnull=False).count())
    _count(receipt, "document nodes", _own_rows(nodes.delete(), DocumentNode))
    documents = Document.objects.filter(owner=user)
    _count(receipt, "stored files", documents.exclude(file="").count())
    _count(receipt, "documents", _own_rows(documents.delete(), Document))


def _erase_queued_jobs(owned: _Owned) -> int:
    """Drops the jobs kept for the workers that name the person's rows (the table holds only what waits
    for the broker to come back: a handful of rows); a job naming others' rows too keeps theirs."""
    removed = 0
    for job in QueuedTask.objects.select_for_update():
        args = list(job.args)
        if job.task in task_names.SESSION_JOBS | task_names.DOCUMENT_JOBS:
            named = owned.session_ids if job.task in task_names.SESSION_JOBS else owned.document_ids
            if args and str(args[0]) in named:
                job.delete()
                removed += 1
        elif job.task in task_names.EMBED_JOBS and len(args) == 2 and isinstance(args[1], list):
            mine = owned.rows.get(str(args[0]), set())
            left = [row for row in args[1] if row not in mine]
            if not left:
                job.delete()
                removed += 1
            elif len(left) < len(args[1]):
                QueuedTask.objects.filter(pk=job.pk).update(args=[args[0], left])
    return removed


def _erase_access(user, receipt: ErasureReceipt) -> None:
    """Every way in but the password: tokens, browser sessions; and the invitations and request that
    name the person."""
    tokens = ApiToken.objects.filter(owner=user)
    _count(receipt, "sign-in tokens", tokens.filter(kind=ApiToken.Kind.SIGN_IN).delete()[0])
    _count(receipt, "API tokens", tokens.delete()[0])
    Token.objects.filter(user=user).delete()  # never holds a row for long (``accounts_app.tokens``)
    signed_in = [row.session_key for row in Session.objects.iterator() if _signs_in(row, user)]
    browser_sessions = Session.objects.filter(session_key__in=signed_in)
    _count(receipt, "browser sessions (signed out everywhere)", browser_sessions.delete()[0])
    _count(receipt, "invitations", Invitation.objects.filter(Q(created_by=user) | Q(used_by=user)).delete()[0])
    _count(receipt, "account requests", AccountRequest.objects.filter(user=user).delete()[0])


def _signs_in(session: Session, user) -> bool:
    return session.get_decoded().get(SESSION_KEY) == str(user.pk)


def _log_entries_about(user) -> models.QuerySet:
    """The admin's log lines about the person's rows: each names its row in words (``object_repr``
    quotes a message or a memory)."""
    about = Q(pk__in=[])
    for model in (ChatSession, Message, Archive, Memory, Document, DocumentNode, SearchTrace, ApiToken):
        ids = model.objects.filter(owner=user).annotate(as_text=Cast("pk", CharField())).values("as_text")
        about |= Q(content_type=ContentType.objects.get_for_model(model), object_id__in=ids)
    return LogEntry.objects.filter(about)


def _erase_other_owned_rows(user, owned: _Owned, receipt: ErasureReceipt) -> None:
    """Whatever else is kept for the person by an ``owner`` (exports, imports, and any table added
    later), with the files it stores."""
    user_model = get_user_model()
    for model in apps.get_models():
        fields = model._meta.get_fields()
        if model is ModelCall or not any(
            f.name == "owner" and f.many_to_one and f.related_model is user_model for f in fields
        ):
            continue
        rows = model.objects.filter(owner=user)
        file_fields = [f.name for f in fields if isinstance(f, models.FileField)]
        for row in rows.only("pk", *file_fields) if file_fields else ():
            stored = [getattr(row, name) for name in file_fields]
            owned.files += [(file.storage, file.name) for file in stored if file.name]
        _count(receipt, str(model._meta.verbose_name_plural), _own_rows(rows.delete(), model))


def _after_commit(*, user_id: int, owned: _Owned, receipt: ErasureReceipt) -> None:
    for storage, name in owned.files:
        try:
            if not storage.exists(name):
                receipt.not_removed.append({"kind": "stored file", "name": name, "reason": "already missing"})
                continue
            storage.delete(name)
        except OSError as exc:
            logger.warning("could not delete the stored file %s", name, exc_info=True)
            receipt.not_removed.append({"kind": "stored file", "name": name, "reason": str(exc)})
    if not working_sets_clear(session_ids=owned.session_ids):
        expires = timezone.now() + timedelta(seconds=working_set_lifetime_s())
        receipt.not_removed.append(
            {
                "kind": "working sets",
                "count": len(owned.session_ids),
                "reason": "Redis could not be reached; they expire by themselves",
                "expires_by": expires.isoformat(),
            }
        )
    _forget_throttle(user_id)


def _forget_throttle(user_id: int) -> None:
    throttle = PasswordGuessThrottle()
    key = throttle.cache_format % {"scope": "password", "ident": user_id}
    try:
        throttle.cache.delete(key)
    except Exception:  # a counter of attempts with no content, gone within its period
        logger.warning("could not clear the password attempts of user %s", user_id, exc_info=True)
