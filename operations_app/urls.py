"""Operators' pages, mounted under /admin/ops/ beside the admin and behind the same staff sign-in."""

from django.contrib import admin
from django.urls import path

from operations_app import people, views

urlpatterns = [
    path("", admin.site.admin_view(views.dashboard), name="ops-dashboard"),
    path("traces/<uuid:trace_id>/", admin.site.admin_view(views.trace), name="ops-trace"),
    path("sessions/<uuid:session_id>/", admin.site.admin_view(views.session), name="ops-session"),
    path("people/", admin.site.admin_view(people.people), name="ops-people"),
]
