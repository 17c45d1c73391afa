"""Chat reads through the apps it sits on: the session and its history (``sessions_app.selectors``),
the passages (``retrieval_app.services``)."""
