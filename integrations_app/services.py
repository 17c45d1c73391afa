"""The doors add no business rules of their own: a ``/v1`` completion is a chat turn of
``chat_app.services``, placed in a session by ``openai_sessions``; an MCP tool (``mcp_tools``) calls the
services of ``sessions_app`` and ``retrieval_app`` that the REST API calls."""
