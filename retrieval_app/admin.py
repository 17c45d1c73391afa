"""Search traces in the admin: read-only, newest first; a trace opens as the operators' readable page."""

from django.contrib import admin
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.html import format_html

from foundation.admin import ReadOnlyAdminMixin
from retrieval_app.models import SearchTrace


@admin.register(SearchTrace)
class SearchTraceAdmin(ReadOnlyAdminMixin, admin.ModelAdmin):
    list_display = ("created_at", "kind", "outcome", "short_query", "owner", "result_count", "total_ms", "turn_ms")
    list_filter = ("kind", "outcome", "created_at")
    search_fields = ("query", "rewritten_query", "target_uri", "owner__username")
    list_select_related = ("owner",)
    ordering = ("-created_at",)
    date_hierarchy = "created_at"

    def get_queryset(self, request):
        # The list never needs the stages, the plan or the results: the largest columns by far.
        return super().get_queryset(request).defer("stages", "plan", "results", "rewrite_decision")

    @admin.display(description="query")
    def short_query(self, obj: SearchTrace) -> str:
        return format_html('<a href="{}">{}</a>', reverse("ops-trace", args=[obj.pk]), obj.query[:80])

    @admin.display(description="turn ms")
    def turn_ms(self, obj: SearchTrace):
        return obj.timings.get("turn", "-")

    def change_view(self, request, object_id, form_url="", extra_context=None):
        # A trace is read on its own page, stage by stage; its raw JSON is there too, folded.
        if self.has_view_permission(request) and SearchTrace.objects.filter(pk=object_id).exists():
            return redirect("ops-trace", trace_id=object_id)
        return super().change_view(request, object_id, form_url, extra_context)
