"""The joining pages, mounted at the site root by config.urls."""

from django.urls import path

from accounts_app import views

urlpatterns = [
    path("join/<str:key>/", views.JoinView.as_view(), name="join"),
    path("accounts/sign-up/", views.SignUpView.as_view(), name="sign-up"),
]
