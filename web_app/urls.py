"""The browser app's pages, mounted at the site root by config.urls."""

from django.urls import path

from web_app import views

urlpatterns = [
    path("chat/<uuid:session_id>", views.ChatPageView.as_view(), name="chat-session-page"),
    path("documents/", views.DocumentsPageView.as_view(), name="documents-page"),
    path("memories/", views.MemoriesPageView.as_view(), name="memories-page"),
    path("account/", views.AccountPageView.as_view(), name="account-page"),
    path("account/password/", views.PasswordChangeView.as_view(), name="password-change"),
    path("settings/", views.SettingsPageView.as_view(), name="settings-page"),
]
