"""Celery tasks of retrieval (none yet; embedding tasks live with the rows they embed)."""
