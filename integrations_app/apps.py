from django.apps import AppConfig


class IntegrationsAppConfig(AppConfig):
    name = "integrations_app"
    verbose_name = "Integrations"
