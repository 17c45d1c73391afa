import json

from django.contrib import admin
from django.utils.html import format_html

from retrieval_app.models import SearchTrace


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
