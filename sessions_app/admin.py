"""Conversations in the admin: read, renamed, committed or deleted through the services; what is derived
from them (messages as recorded, archives, summaries, vectors) is shown, never edited."""

import json

from django import forms
from django.conf import settings
from django.contrib import admin
from django.db import models
from django.db.models import Count
from django.urls import reverse
from django.utils.html import format_html

from foundation.admin import (
    EmbeddedFilter,
    EmbeddingAdminMixin,
    ReadOnlyAdminMixin,
    ServiceDeleteMixin,
    confirmed_action,
)
from foundation.ai.memories import label as memory_label
from foundation.parsers import JSON_VALUE_MAX_DEPTH, json_problem, readable_path
from sessions_app import selectors, services
from sessions_app.models import Archive, ChatSession, Memory, Message


def _short(text: str, length: int = 80) -> str:
    return text if len(text) <= length else text[: length - 1] + "…"


class StorableJSONFormField(forms.JSONField):
    """Metadata as an operator types it, held to the API's rule: storable text, at most
    JSON_VALUE_MAX_DEPTH levels deep, at most METADATA_MAX_BYTES long."""

    def to_python(self, value):
        try:
            value = super().to_python(value)
        except RecursionError as exc:  # deeper than Python parses: far past the limit
            raise forms.ValidationError(f"It is nested more than {JSON_VALUE_MAX_DEPTH} levels deep.") from exc
        found = json_problem(value, max_depth=JSON_VALUE_MAX_DEPTH)
        if found is not None:
            path, problem = found
            raise forms.ValidationError(f"{readable_path(path) or 'It'} {problem}.")
        size = len(json.dumps(value, ensure_ascii=False).encode("utf-8"))
        if size > settings.METADATA_MAX_BYTES:
            raise forms.ValidationError(f"It is {size} bytes as JSON; the limit is {settings.METADATA_MAX_BYTES}.")
        return value


class ShownMetadataMixin:
    """Metadata read as text and parsed for showing (see ``selectors.with_metadata_text``): a value kept
    before its depth was limited is shown cut, and is then not editable (saving would keep the cut)."""

    def get_queryset(self, request):
        return selectors.with_metadata_text(super().get_queryset(request))

    def get_object(self, request, object_id, from_field=None):
        obj = super().get_object(request, object_id, from_field)
        if obj is not None:
            selectors.metadata_loaded([obj])
        return obj

    def get_readonly_fields(self, request, obj=None):
        fields = tuple(super().get_readonly_fields(request, obj))
        return (*fields, "metadata") if getattr(obj, "metadata_cut", False) else fields

    def save_model(self, request, obj, form, change) -> None:
        if not getattr(obj, "metadata_cut", False):
            super().save_model(request, obj, form, change)
            return
        # What is shown is cut; what is stored stays as it was.
        kept = [f.name for f in obj._meta.concrete_fields if not f.primary_key and f.name != "metadata"]
        obj.save(update_fields=kept)


@admin.register(ChatSession)
class ChatSessionAdmin(ShownMetadataMixin, ServiceDeleteMixin, admin.ModelAdmin):
    list_display = ("short_title", "owner", "agent_id", "created_at", "last_message_at", "committed_at", "read")
    list_filter = ("agent_id", "created_at", "committed_at")
    search_fields = ("id", "title", "owner__username", "agent_id")
    list_select_related = ("owner",)
    ordering = ("-created_at",)
    date_hierarchy = "created_at"
    fields = (
        "id",
        "owner",
        "agent_id",
        "title",
        "metadata",
        "read",
        "created_at",
        "last_message_at",
        "committed_at",
        "rolling_summary",
        "summary_through_seq",
        "summary_updated_at",
    )
    # The owner and agent are copied onto every message and archive; the summary and its watermark are
    # derived from the messages. Only the title and metadata are a person's to change.
    readonly_fields = tuple(name for name in fields if name not in ("title", "metadata"))
    formfield_overrides = {models.JSONField: {"form_class": StorableJSONFormField}}
    actions = [
        "delete_selected",
        confirmed_action(
            name="commit_selected",
            description="Commit the selected conversations (archive and extract memories)",
            verb="commit",
            run=lambda session: services.session_commit(session=session),
        ),
    ]

    @admin.display(description="title", ordering="title")
    def short_title(self, obj: ChatSession) -> str:
        return _short(str(obj), 70)

    @admin.display(description="operator's view")
    def read(self, obj: ChatSession) -> str:
        return format_html('<a href="{}">read it</a>', reverse("ops-session", args=[obj.pk])) if obj.pk else "-"

    def has_add_permission(self, request) -> bool:
        return False  # conversations start in the app or through the API, which record their first turns

    def delete_with(self, obj: ChatSession) -> None:
        # What DELETE /api/sessions/{id} does: messages, archives, traces and the memories drawn only from it.
        services.session_delete(session=obj)

    def deletion_summary(self, objs) -> dict[str, int]:
        ids = [obj.pk for obj in objs]
        return {
            "messages": Message.objects.filter(session_id__in=ids).count(),
            "archives": Archive.objects.filter(session_id__in=ids).count(),
            # Traces are retrieval's rows; they go with their conversation (their foreign key cascades).
            "search traces": ChatSession.objects.filter(pk__in=ids).aggregate(n=Count("search_traces"))["n"],
        }


@admin.register(Message)
class MessageAdmin(ShownMetadataMixin, ReadOnlyAdminMixin, EmbeddingAdminMixin, admin.ModelAdmin):
    """Messages as they were recorded: a changed text would no longer match its vector, its archive's
    summary or the memories drawn from it. A conversation is deleted whole."""

    list_display = ("short_session", "seq", "role", "short_content", "created_at", "token_count", "embedded")
    list_filter = ("role", EmbeddedFilter, "embedding_model", "created_at")
    search_fields = ("content", "session__title", "session__id", "owner__username")
    ordering = ("-created_at", "-id")
    readonly_fields = ("embedding_model",)

    def get_queryset(self, request):
        # The conversation is shown by its title; its metadata, however deep, is not read.
        return super().get_queryset(request).select_related("session").defer("session__metadata")

    @admin.display(description="conversation")
    def short_session(self, obj: Message) -> str:
        return format_html(
            '<a href="{}#m{}">{}</a>',
            reverse("ops-session", args=[obj.session_id]),
            obj.seq,
            _short(str(obj.session), 40),
        )

    @admin.display(description="content")
    def short_content(self, obj: Message) -> str:
        return _short(obj.content, 90)


@admin.register(Archive)
class ArchiveAdmin(ReadOnlyAdminMixin, EmbeddingAdminMixin, admin.ModelAdmin):
    list_display = ("uri", "short_abstract", "message_count", "created_at", "embedded")
    list_filter = (EmbeddedFilter, "embedding_model", "created_at")
    search_fields = ("uri", "abstract", "overview", "session__title")
    list_select_related = ("session",)
    ordering = ("-created_at", "-id")
    readonly_fields = ("embedding_model",)

    @admin.display(description="L0 abstract")
    def short_abstract(self, obj: Archive) -> str:
        return _short(obj.abstract, 90)


@admin.register(Memory)
class MemoryAdmin(ServiceDeleteMixin, EmbeddingAdminMixin, admin.ModelAdmin):
    """A memory's text can be corrected (its old text kept in its history, its vector made again, as in
    the app); what it is about and whose it is cannot."""

    list_display = ("label", "key", "category", "short_content", "owner", "agent_id", "updated_at", "embedded")
    list_filter = ("category", "agent_id", EmbeddedFilter, "embedding_model")
    search_fields = ("key", "content", "owner__username")
    list_select_related = ("owner",)
    ordering = ("-updated_at", "-id")
    fields = (
        "owner",
        "agent_id",
        "category",
        "key",
        "content",
        "history",
        "source_archive",
        "superseded_by",
        "embedding_model",
        "created_at",
        "updated_at",
    )
    readonly_fields = tuple(name for name in fields if name != "content")

    @admin.display(description="memory")
    def label(self, obj: Memory) -> str:
        return memory_label(obj.key, obj.content)

    @admin.display(description="content")
    def short_content(self, obj: Memory) -> str:
        return _short(obj.content, 90)

    def has_add_permission(self, request) -> bool:
        return False  # drawn from conversations when they are committed, or added by their owner in the app

    def save_model(self, request, obj: Memory, form, change) -> None:
        if change and "content" in form.changed_data:
            services.memory_edit(memory=obj, content=form.cleaned_data["content"])

    def delete_with(self, obj: Memory) -> None:
        services.memory_delete(memory=obj)
