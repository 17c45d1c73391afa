"""The doors' entry points: ``openai_api`` serves ``/v1`` (Django views, routes in ``urls``), and
``mcp_server`` serves ``/mcp`` (an ASGI app beside Django, routed in ``config/asgi.py``, with the OAuth
protected-resource metadata as a Django view). Both authenticate with the API tokens of ``accounts_app``."""
