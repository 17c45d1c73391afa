from django.contrib import admin

from documents_app.models import Document, DocumentNode
from retrieval_app.admin_mixins import EmbeddedFilter, EmbeddingAdminMixin


@admin.register(Document)
class DocumentAdmin(admin.ModelAdmin):
    list_display = ("__str__", "owner", "status", "media_type", "size_bytes", "node_count", "created_at")
    list_filter = ("status", "media_type", "created_at")
    search_fields = ("title", "filename", "uri", "content_hash", "owner__username")
    list_select_related = ("owner",)
    raw_id_fields = ("owner",)
    readonly_fields = ("id", "uri", "content_hash", "size_bytes", "created_at", "updated_at", "indexed_at")


@admin.register(DocumentNode)
class DocumentNodeAdmin(EmbeddingAdminMixin, admin.ModelAdmin):
    list_display = ("uri", "kind", "level", "position", "title", "token_count", "embedded")
    list_filter = ("kind", "level", EmbeddedFilter, "embedding_model")
    search_fields = ("uri", "title", "abstract", "overview")
    raw_id_fields = ("document", "owner")
    readonly_fields = ("embedding_model", "content_hash")
