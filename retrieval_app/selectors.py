"""Retrieval's reads are its searches, in ``services`` (``retrieval_find``, ``retrieval_search``) and
``recall`` (``memory_recall``): each also writes its trace, so they are services. The operators' pages
read traces in ``operations_app.selectors``."""
