"""Documents in the admin: added by uploading a file through the same service as the API (validated the
same way), indexed again or deleted through the services; their trees, tiers and vectors are shown,
never edited."""

from django import forms
from django.conf import settings
from django.contrib import admin
from django.db.models import Count, Q

from documents_app import services, titles
from documents_app.models import Document, DocumentNode
from documents_app.parsing import FORMATS
from foundation.admin import (
    EmbeddedFilter,
    EmbeddingAdminMixin,
    ReadOnlyAdminMixin,
    ServiceDeleteMixin,
    confirmed_action,
)
from foundation.exceptions import DomainError


class DocumentUploadForm(forms.ModelForm):
    """An upload, as the API takes it: the file is read, refused or stored by ``document_upload``."""

    file = forms.FileField(
        help_text=(
            f"Up to {settings.DOCUMENT_MAX_BYTES / 1024 / 1024:.1f} MB; "
            f"{', '.join(name for name, _ in FORMATS.values())}. Indexed in a worker once saved."
        )
    )

    class Meta:
        model = Document
        fields = ("owner", "title")

    def clean(self):
        cleaned = super().clean()
        upload, owner = cleaned.get("file"), cleaned.get("owner")
        if upload is None or owner is None:
            return cleaned
        if upload.size > settings.DOCUMENT_MAX_BYTES:
            raise forms.ValidationError(f"The file is {upload.size} bytes; the limit is {settings.DOCUMENT_MAX_BYTES}.")
        try:
            # Stored here, so that every refusal (type, size, a name that lies about the content) is the
            # form's error, said beside the file, never a half-made row.
            self.document, self.created = services.document_upload(
                owner=owner, filename=upload.name, data=upload.read(), title=cleaned.get("title") or ""
            )
        except DomainError as error:
            raise forms.ValidationError(error.message) from error
        return cleaned


@admin.register(Document)
class DocumentAdmin(ServiceDeleteMixin, admin.ModelAdmin):
    list_display = ("short_title", "owner", "status", "media_type", "size_bytes", "node_count", "created_at")
    list_filter = ("status", "media_type", "created_at")
    search_fields = ("title", "filename", "uri", "content_hash", "owner__username")
    list_select_related = ("owner",)
    raw_id_fields = ("owner",)  # an id with a lookup, not a list of every user
    ordering = ("-created_at",)
    date_hierarchy = "created_at"
    fields = (
        "id",
        "owner",
        "title",
        "filename",
        "status",
        "error",
        "index_attempts",
        "uri",
        "media_type",
        "size_bytes",
        "node_count",
        "content_hash",
        "created_at",
        "updated_at",
        "indexed_at",
    )
    readonly_fields = tuple(name for name in fields if name != "title")
    actions = [
        "delete_selected",
        confirmed_action(
            name="index_again",
            description="Index the selected documents again (in the workers)",
            verb="queue for indexing",
            run=lambda document: services.document_reindex(document=document),
        ),
    ]

    @admin.display(description="title", ordering="title")
    def short_title(self, obj: Document) -> str:
        text = str(obj)
        return text if len(text) <= 60 else text[:59] + "…"

    def get_form(self, request, obj=None, change=False, **kwargs):
        if obj is None:
            kwargs["form"] = DocumentUploadForm
        return super().get_form(request, obj, change=change, **kwargs)

    def get_fields(self, request, obj=None):
        return ("owner", "title", "file") if obj is None else self.fields

    def get_readonly_fields(self, request, obj=None):
        return () if obj is None else self.readonly_fields

    def save_form(self, request, form, change):
        if change:
            return super().save_form(request, form, change)
        # The upload stored the document already (in the form's ``clean``): the admin goes on with that
        # row, logging and showing it, rather than with a second, unsaved one.
        if not form.created:
            self.message_user(request, "Those bytes were uploaded before: this is the existing document.")
        return form.document

    def save_model(self, request, obj: Document, form, change) -> None:
        if change and "title" in form.changed_data and titles.tidy(form.cleaned_data["title"]):
            # Only the title is editable, renamed as in the app: nothing the index was built from changes.
            services.document_rename(document=obj, title=form.cleaned_data["title"])

    def save_related(self, request, form, formsets, change) -> None:
        pass  # no relations to save: the service made the row

    def delete_with(self, obj: Document) -> None:
        # What DELETE /api/documents/{id} does: every node and vector, the stored file, trace references.
        services.document_delete(document=obj)

    def deletion_summary(self, objs) -> dict[str, int]:
        counts = DocumentNode.objects.filter(document__in=objs).aggregate(
            nodes=Count("id"), vectors=Count("id", filter=~Q(embedding_model=""))
        )
        return {"document nodes": counts["nodes"], "vectors": counts["vectors"], "stored files": len(objs)}


@admin.register(DocumentNode)
class DocumentNodeAdmin(ReadOnlyAdminMixin, EmbeddingAdminMixin, admin.ModelAdmin):
    list_display = ("short_uri", "kind", "level", "position", "short_title", "token_count", "embedded")
    list_filter = ("kind", "level", EmbeddedFilter, "embedding_model")
    search_fields = ("uri", "title", "abstract", "overview")
    ordering = ("-id",)
    readonly_fields = ("embedding_model", "content_hash")

    @admin.display(description="uri")
    def short_uri(self, obj: DocumentNode) -> str:
        # The user and document are in the document column's link; the path below it says which node.
        return obj.uri.split("/documents/", 1)[-1][:90]

    @admin.display(description="title")
    def short_title(self, obj: DocumentNode) -> str:
        return obj.title[:60]
