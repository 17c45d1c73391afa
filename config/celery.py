"""The Celery application; tasks live in each app's ``tasks`` module."""

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.dev")

app = Celery("recollect")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
