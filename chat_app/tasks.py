"""A turn is answered while the person waits, in the request or the websocket that asked; the work
it leaves behind (embedding the messages, folding the summary, committing) is ``sessions_app``'s tasks."""
