"""The doors other tools use: an OpenAI-compatible chat API (``/v1``) for chat front-ends and agent
frameworks, and an MCP server (``/mcp``) for agents' tools. Both sit on the same services as the REST
API and the websocket, with the same API tokens."""
