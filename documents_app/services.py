"""Writes of documents: upload, indexing into the node tree, reindex and delete."""
