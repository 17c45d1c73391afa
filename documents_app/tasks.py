"""Celery tasks of documents: they take ids, re-fetch rows and are idempotent."""
