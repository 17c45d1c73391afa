"""API tokens in the admin, listed by name and first characters only (never a usable key) and
revocable. DRF's own token page is removed: it listed every sign-in key in full."""

from django.contrib import admin
from rest_framework.authtoken.models import TokenProxy

from accounts_app.models import ApiToken
from accounts_app.tokens import api_tokens_revoke

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
