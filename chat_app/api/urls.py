"""This app's API routes, mounted under /api/ by config.urls."""

from django.urls import path

from chat_app.api import views

urlpatterns = [
    path("ai/chat", views.ChatView.as_view(), name="chat"),
    path("ai/chat/stream", views.ChatStreamView.as_view(), name="chat-stream"),
]
