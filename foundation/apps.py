from django.apps import AppConfig


class FoundationConfig(AppConfig):
    """The base every app builds on: model calls, embedding, keyword scoring, queues, URIs, the API's
    plumbing. It imports no app above it."""

    name = "foundation"
    verbose_name = "Model calls"
    default_auto_field = "django.db.models.BigAutoField"
