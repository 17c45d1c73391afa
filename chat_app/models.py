"""Chat keeps no table of its own: a turn is stored as the session's messages (``sessions_app``) and
its search trace (``retrieval_app``), and what it noted as the person's memories."""
