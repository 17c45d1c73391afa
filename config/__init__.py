"""Project configuration: settings, URLs, the ASGI/WSGI entry points, Celery and embedded servers."""

from .celery import app as celery_app

__all__ = ["celery_app"]
