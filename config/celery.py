"""The Celery application; tasks live in each app's ``tasks`` module."""

from celery import Celery

app = Celery("recollect")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
# The foundation's embedding jobs live below an app rather than in one.
app.autodiscover_tasks(["retrieval_app.core"])
