"""Search traces and model calls in the admin (read-only, newest first; a trace opens as the readable
page), users, whose deletion goes through the operators' service so nothing they owned is left
behind, and API tokens, listed by name and first characters only (never a usable key) and revocable.
DRF's own token page is removed: it listed every sign-in key in full."""

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.db.models import Avg, Count, Q, Sum
from django.shortcuts import redirect
from django.urls import reverse
from django.utils.html import format_html
from rest_framework.authtoken.models import TokenProxy

from retrieval_app.core.admin import ReadOnlyAdminMixin, ServiceDeleteMixin
from retrieval_app.core.tokens import api_tokens_revoke
from retrieval_app.models import ApiToken, ModelCall, SearchTrace
from retrieval_app.operations.services import user_delete, user_deletion_summary


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


User = get_user_model()
admin.site.unregister(User)


@admin.register(User)
class RecollectUserAdmin(ServiceDeleteMixin, UserAdmin):
    """Django's user admin, newest first, deleting a user with everything they own."""

    list_display = ("username", "email", "is_staff", "is_active", "date_joined", "last_login", "activity")
    ordering = ("-date_joined",)

    @admin.display(description="activity")
    def activity(self, obj) -> str:
        return format_html('<a href="{}?user={}">dashboard</a>', reverse("ops-dashboard"), obj.username)

    def delete_with(self, obj) -> None:
        user_delete(user=obj)

    def deletion_summary(self, objs) -> dict[str, int]:
        return user_deletion_summary(users=objs)


if admin.site.is_registered(TokenProxy):
    admin.site.unregister(TokenProxy)


@admin.register(ApiToken)
class ApiTokenAdmin(admin.ModelAdmin):
    """Who holds which token and when it was last used; a token may be revoked here (its open sockets
    close at once), never created or read: only its digest is stored."""

    list_display = ("name", "kind", "prefix", "owner", "created_at", "last_used_at", "expires_at")
    list_filter = ("kind", "created_at", "last_used_at")
    search_fields = ("name", "prefix", "owner__username")
    list_select_related = ("owner",)
    ordering = ("-created_at",)
    fields = ("name", "kind", "prefix", "owner", "created_at", "last_used_at", "expires_at")
    readonly_fields = fields

    def has_add_permission(self, request, obj=None) -> bool:
        return False

    def has_change_permission(self, request, obj=None) -> bool:
        return False

    def delete_model(self, request, obj) -> None:
        api_tokens_revoke(tokens=ApiToken.objects.filter(pk=obj.pk))

    def delete_queryset(self, request, queryset) -> None:
        api_tokens_revoke(tokens=queryset)
