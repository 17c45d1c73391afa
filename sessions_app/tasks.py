"""Celery tasks of sessions and memory: they take ids, re-fetch rows and are idempotent."""
