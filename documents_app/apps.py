from django.apps import AppConfig


class DocumentsAppConfig(AppConfig):
    name = "documents_app"
    verbose_name = "Documents"
