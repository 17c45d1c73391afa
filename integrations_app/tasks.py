"""The doors run nothing in the background: a completion or a tool call is answered while the client
waits, and the work it leaves behind is ``sessions_app``'s and ``documents_app``'s tasks."""
