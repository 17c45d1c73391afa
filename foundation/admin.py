"""Admin behaviour shared by the apps (rows with an embedding, derived rows shown read-only, deletion
through the services, actions confirmed on a page of their own), and the foundation's own model calls."""

from __future__ import annotations

from django.contrib import admin
from django.contrib.admin import helpers
from django.db.models import Avg, BooleanField, Count, ExpressionWrapper, Q, Sum
from django.template.response import TemplateResponse
from django.utils.text import capfirst

from foundation.models import ModelCall


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


class ReadOnlyAdminMixin:
    """Rows the product derives (archives, vectors, traces, model calls): shown, never edited, added or
    deleted by hand, since they would no longer match what they were derived from. They go when what
    they came from goes."""

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def has_delete_permission(self, request, obj=None) -> bool:
        return False


class ServiceDeleteMixin:
    """Deletion through the app's service (``delete_with``), for one row and for a selection, with a
    confirmation page that says how much goes with them in counts (``deletion_summary``), rather than
    listing every message of a long conversation."""

    def delete_with(self, obj) -> None:  # pragma: no cover - each admin names its service
        raise NotImplementedError

    def deletion_summary(self, objs) -> dict[str, int]:
        return {}

    def delete_model(self, request, obj) -> None:
        self.delete_with(obj)

    def delete_queryset(self, request, queryset) -> None:
        for obj in queryset:
            self.delete_with(obj)

    def get_deleted_objects(self, objs, request):
        objs = list(objs)
        opts = self.model._meta
        listed = [f"{capfirst(opts.verbose_name)}: {obj}" for obj in objs[:50]]
        if len(objs) > 50:
            listed.append(f"… and {len(objs) - 50} more")
        summary = self.deletion_summary(objs)
        model_count = {opts.verbose_name_plural: len(objs), **{name: count for name, count in summary.items() if count}}
        return listed, model_count, set(), []


def confirmed_action(*, name: str, description: str, verb: str, run, permission: str = "change"):
    """An admin action that first shows the selection on a confirmation page, then runs ``run(obj)`` on
    each once confirmed (as Django's own delete action does), and says how many it did."""

    def action(model_admin, request, queryset):
        if request.POST.get("confirmed") != "yes":
            context = {
                **model_admin.admin_site.each_context(request),
                "title": f"{description}?",
                "opts": model_admin.model._meta,
                "queryset": queryset[:100],
                "count": queryset.count(),
                "action": name,
                "verb": verb,
                "action_checkbox_name": helpers.ACTION_CHECKBOX_NAME,
                "selected": [str(pk) for pk in queryset.values_list("pk", flat=True)],
            }
            return TemplateResponse(request, "admin/confirm_action.html", context)
        done = 0
        for obj in queryset:
            run(obj)
            done += 1
        model_admin.message_user(request, f"{verb.capitalize()}: {done} {model_admin.model._meta.verbose_name_plural}.")
        return None

    action.__name__ = name
    return admin.action(description=description, permissions=[permission])(action)


@admin.register(ModelCall)
class ModelCallAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    """Every model call with its tokens, cost and time; the list shows totals for what is filtered."""

    list_display = (
        "created_at",
        "kind",
        "purpose",
        "backend",
        "model",
        "owner",
        "input_tokens",
        "output_tokens",
        "cost_usd",
        "latency_ms",
        "ok",
    )
    list_filter = ("kind", "purpose", "backend", "ok", "model", "created_at")
    search_fields = ("model", "purpose", "error", "owner__username")
    date_hierarchy = "created_at"
    list_select_related = ("owner",)
    ordering = ("-created_at",)

    def changelist_view(self, request, extra_context=None):
        response = super().changelist_view(request, extra_context=extra_context)
        changelist = getattr(response, "context_data", {}).get("cl")
        if changelist is not None:
            totals = changelist.queryset.aggregate(
                calls=Count("id"),
                input_tokens=Sum("input_tokens"),
                output_tokens=Sum("output_tokens"),
                cost_usd=Sum("cost_usd"),
                mean_latency_ms=Avg("latency_ms"),
                failures=Count("id", filter=Q(ok=False)),
            )
            response.context_data["totals"] = totals
        return response
