"""This app's API routes, mounted under /api/ by config.urls."""

urlpatterns: list = []
