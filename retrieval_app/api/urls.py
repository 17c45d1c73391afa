"""This app's API routes, mounted under /api/ by config.urls."""

from django.urls import path

from retrieval_app.api import views

urlpatterns = [
    path("retrieval/find", views.FindView.as_view(), name="retrieval-find"),
    path("retrieval/search", views.SearchView.as_view(), name="retrieval-search"),
    path("memory/recall", views.RecallView.as_view(), name="memory-recall"),
]
