"""Operators' pages, mounted under /admin/ops/ beside the admin and behind the same staff login."""

from django.urls import path  # noqa: F401

urlpatterns: list = []
