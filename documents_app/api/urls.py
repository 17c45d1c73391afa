"""This app's API routes, mounted under /api/ by config.urls."""

from django.urls import path

from documents_app.api import views

urlpatterns = [
    path("documents/upload", views.UploadView.as_view(), name="document-upload"),
    path("documents", views.DocumentListView.as_view(), name="document-list"),
    path("documents/<str:doc_id>", views.DocumentDetailView.as_view(), name="document-detail"),
    path("documents/<str:doc_id>/reindex", views.ReindexView.as_view(), name="document-reindex"),
    path("fs/ls", views.LsView.as_view(), name="fs-ls"),
    path("fs/read", views.ReadView.as_view(), name="fs-read"),
]
