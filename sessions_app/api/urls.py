"""This app's API routes, mounted under /api/ by config.urls (paths have no trailing slash)."""

from django.urls import path

from sessions_app.api import views

urlpatterns = [
    path("sessions", views.SessionListView.as_view(), name="session-list"),
    path("sessions/<str:session_id>", views.SessionDetailView.as_view(), name="session-detail"),
    path("sessions/<str:session_id>/messages", views.SessionMessagesView.as_view(), name="session-messages"),
    path("sessions/<str:session_id>/archives", views.SessionArchivesView.as_view(), name="session-archives"),
    path("sessions/<str:session_id>/commit", views.SessionCommitView.as_view(), name="session-commit"),
    path("sessions/<str:session_id>/context", views.SessionContextView.as_view(), name="session-context"),
    path("sessions/<str:session_id>/history", views.SessionHistoryView.as_view(), name="session-history"),
    path("sessions/<str:session_id>/working-set", views.SessionWorkingSetView.as_view(), name="session-working-set"),
    path("memories", views.MemoryListView.as_view(), name="memory-list"),
    path("memories/<str:memory_id>", views.MemoryDetailView.as_view(), name="memory-detail"),
]
