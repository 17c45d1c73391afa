"""Writes for retrieval: recording search traces. find() and search() are built here."""
