"""Admin behaviour shared by every model that carries an embedding."""

from __future__ import annotations

from django.contrib import admin
from django.db.models import BooleanField, ExpressionWrapper, Q


class EmbeddedFilter(admin.SimpleListFilter):
    title = "embedded"
    parameter_name = "embedded"

    def lookups(self, request, model_admin):
        return [("yes", "Yes"), ("no", "No")]

    def queryset(self, request, queryset):
        if self.value() == "yes":
            return queryset.filter(embedding__isnull=False)
        if self.value() == "no":
            return queryset.filter(embedding__isnull=True)
        return queryset


class EmbeddingAdminMixin:
    """Never loads or renders a vector: pages show whether a row is embedded, and by which model."""

    exclude = ("embedding",)

    def get_queryset(self, request):
        return (
            super()
            .get_queryset(request)
            .defer("embedding")
            .annotate(_has_embedding=ExpressionWrapper(Q(embedding__isnull=False), output_field=BooleanField()))
        )

    @admin.display(boolean=True, description="embedded", ordering="_has_embedding")
    def embedded(self, obj) -> bool:
        return obj._has_embedding
