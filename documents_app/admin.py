from django.contrib import admin

from documents_app import services
from documents_app.models import Document, DocumentNode
from retrieval_app.core.admin import EmbeddedFilter, EmbeddingAdminMixin


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ("__str__", "owner", "status", "media_type", "size_bytes", "node_count", "created_at")
    list_filter = ("status", "media_type", "created_at")
    search_fields = ("title", "filename", "uri", "content_hash", "owner__username")
    list_select_related = ("owner",)
    raw_id_fields = ("owner",)
    readonly_fields = ("id", "uri", "content_hash", "size_bytes", "created_at", "updated_at", "indexed_at")
    actions = ["index_again"]

    @admin.action(description="Index the selected documents again (in the workers)")
    def index_again(self, request, queryset) -> None:
        for document in queryset:
            services.document_reindex(document=document)
        self.message_user(request, f"{queryset.count()} document(s) queued for indexing.")

    # Deleting here does what DELETE /api/documents/{id} does: the file and trace references go too.
    def delete_model(self, request, obj: Document) -> None:
        services.document_delete(document=obj)

    def delete_queryset(self, request, queryset) -> None:
        for document in queryset:
            services.document_delete(document=document)


@admin.register(DocumentNode)
class DocumentNodeAdmin(EmbeddingAdminMixin, admin.ModelAdmin):
    list_display = ("uri", "kind", "level", "position", "title", "token_count", "embedded")
    list_filter = ("kind", "level", EmbeddedFilter, "embedding_model")
    search_fields = ("uri", "title", "abstract", "overview")
    raw_id_fields = ("document", "owner")
    readonly_fields = ("embedding_model", "content_hash")
