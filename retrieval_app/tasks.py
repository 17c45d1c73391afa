"""Retrieval runs inside the request it answers; the vectors it searches are made by the
foundation's embedding tasks and the apps' indexing tasks."""
