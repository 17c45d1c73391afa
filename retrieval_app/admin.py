import json

from django.contrib import admin
from django.db.models import Avg, Count, Q, Sum
from django.utils.html import format_html

from retrieval_app.models import ModelCall, SearchTrace


@admin.register(SearchTrace)
class SearchTraceAdmin(admin.ModelAdmin):
    list_display = ("created_at", "kind", "short_query", "owner", "session", "result_count", "total_ms")
    list_filter = ("kind", "created_at")
    search_fields = ("query", "rewritten_query", "target_uri", "owner__username")
    list_select_related = ("owner", "session")
    raw_id_fields = ("owner", "session")
    date_hierarchy = "created_at"
    readonly_fields = (
        "id",
        "owner",
        "session",
        "kind",
        "query",
        "rewritten_query",
        "target_uri",
        "result_count",
        "total_ms",
        "created_at",
        "rewrite_decision_pretty",
        "plan_pretty",
        "stages_pretty",
    )
    exclude = ("rewrite_decision", "plan", "stages")

    @admin.display(description="query")
    def short_query(self, obj: SearchTrace) -> str:
        return obj.query[:80]

    def _pretty(self, value) -> str:
        return format_html("<pre style='white-space: pre-wrap'>{}</pre>", json.dumps(value, indent=2))

    @admin.display(description="rewrite decision")
    def rewrite_decision_pretty(self, obj: SearchTrace) -> str:
        return self._pretty(obj.rewrite_decision)

    @admin.display(description="plan")
    def plan_pretty(self, obj: SearchTrace) -> str:
        return self._pretty(obj.plan)

    @admin.display(description="stages")
    def stages_pretty(self, obj: SearchTrace) -> str:
        return self._pretty(obj.stages)

    def has_add_permission(self, request) -> bool:
        return False  # traces are written by searches, never by hand


@admin.register(ModelCall)
class ModelCallAdmin(admin.ModelAdmin):
    """Every model call with its tokens, cost and time; the list shows totals for what is filtered."""

    list_display = (
        "created_at",
        "kind",
        "purpose",
        "backend",
        "model",
        "input_count",
        "input_tokens",
        "output_tokens",
        "cost_usd",
        "latency_ms",
        "ok",
    )
    list_filter = ("kind", "purpose", "backend", "ok", "model", "created_at")
    search_fields = ("model", "purpose", "error", "owner__username")
    date_hierarchy = "created_at"
    raw_id_fields = ("owner",)
    list_select_related = ("owner",)

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

    def has_add_permission(self, request) -> bool:
        return False  # calls are recorded by the model layer, never by hand

    def has_change_permission(self, request, obj=None) -> bool:
        return False
