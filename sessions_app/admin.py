from django.contrib import admin

from retrieval_app.core.admin import EmbeddedFilter, EmbeddingAdminMixin
from sessions_app import services
from sessions_app.models import Archive, ChatSession, Memory, Message


@admin.register(ChatSession)
class ChatSessionAdmin(admin.ModelAdmin):
    list_display = ("__str__", "owner", "agent_id", "created_at", "last_message_at", "committed_at")
    list_filter = ("agent_id", "created_at", "committed_at")
    search_fields = ("id", "title", "owner__username", "agent_id")
    list_select_related = ("owner",)
    raw_id_fields = ("owner",)
    readonly_fields = ("id", "created_at", "updated_at", "summary_updated_at")
    date_hierarchy = "created_at"

    # Deleting here does what DELETE /api/sessions/{id} does: the memories derived only from the
    # session go with it.
    def delete_model(self, request, obj: ChatSession) -> None:
        services.session_delete(session=obj)

    def delete_queryset(self, request, queryset) -> None:
        for session in queryset:
            services.session_delete(session=session)


@admin.register(Message)
class MessageAdmin(EmbeddingAdminMixin, admin.ModelAdmin):
    list_display = (
        "session",
        "seq",
        "role",
        "short_content",
        "created_at",
        "token_count",
        "embedded",
        "embedding_model",
    )
    list_filter = ("role", EmbeddedFilter, "embedding_model", "created_at")
    search_fields = ("content", "session__title", "session__id", "owner__username")
    list_select_related = ("session",)
    raw_id_fields = ("session", "owner", "archive")
    readonly_fields = ("embedding_model",)

    @admin.display(description="content")
    def short_content(self, obj: Message) -> str:
        return obj.content[:100]


@admin.register(Archive)
class ArchiveAdmin(EmbeddingAdminMixin, admin.ModelAdmin):
    list_display = ("uri", "session", "index", "message_count", "abstract", "created_at", "embedded")
    list_filter = (EmbeddedFilter, "embedding_model", "created_at")
    search_fields = ("uri", "abstract", "overview", "session__title")
    list_select_related = ("session",)
    raw_id_fields = ("session",)
    readonly_fields = ("embedding_model",)


@admin.register(Memory)
class MemoryAdmin(EmbeddingAdminMixin, admin.ModelAdmin):
    list_display = ("key", "category", "short_content", "owner", "agent_id", "updated_at", "embedded")
    list_filter = ("category", "agent_id", EmbeddedFilter, "embedding_model")
    search_fields = ("key", "content", "owner__username")
    list_select_related = ("owner",)
    raw_id_fields = ("owner", "source_archive", "superseded_by", "source_messages")
    readonly_fields = ("embedding_model", "created_at", "updated_at")

    @admin.display(description="content")
    def short_content(self, obj: Memory) -> str:
        return obj.content[:100]
