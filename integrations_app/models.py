"""The doors keep no table of their own: what ``/v1`` needs to find a conversation again (the chat id a
front-end sends, a digest of its first turn) is kept in the session's metadata."""
