from django.apps import AppConfig


class PrivacyAppConfig(AppConfig):
    name = "privacy_app"
    verbose_name = "Export, import and erasure"
