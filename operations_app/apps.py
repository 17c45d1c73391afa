from django.apps import AppConfig


class OperationsAppConfig(AppConfig):
    name = "operations_app"
    verbose_name = "Operations"
