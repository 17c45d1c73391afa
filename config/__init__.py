"""Project configuration: settings, URLs, the ASGI/WSGI entry points, the processes and embedded servers."""

from foundation.celery import app as celery_app

__all__ = ["celery_app"]
