import sys

from django.apps import AppConfig
from django.conf import settings


class FoundationConfig(AppConfig):
    """The base every app builds on: model calls, embedding, keyword scoring, queues, URIs, the API's
    plumbing. It imports no app above it."""

    name = "foundation"
    verbose_name = "Model calls"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        sys.setswitchinterval(settings.THREAD_SWITCH_INTERVAL_MS / 1000)
