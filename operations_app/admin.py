"""Users in the admin: newest first, with a link to their activity on the dashboard; deleting one goes
through the operators' service, so nothing they owned is left behind."""

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.urls import reverse
from django.utils.html import format_html

from foundation.admin import ServiceDeleteMixin
from operations_app.services import user_delete, user_deletion_summary

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
