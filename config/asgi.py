"""ASGI entry point served by Daphne: HTTP through Django (but /mcp, the MCP server), websockets through Channels.

DJANGO_SETTINGS_MODULE must be set (``make run`` sets it): a server never guesses its settings, so a
production unit that forgets it fails to start instead of serving development settings.
"""

import django

# Django must be set up before anything imports models (consumers, routing).
django.setup(set_prefix=False)

import sys  # noqa: E402

from channels.routing import ProtocolTypeRouter, URLRouter  # noqa: E402
from django.conf import settings  # noqa: E402

from config import accepting, server  # noqa: E402
from config.handler import ConnectionSafeASGIHandler  # noqa: E402
from config.routing import websocket_urlpatterns  # noqa: E402
from config.ws_auth import auth_stack, origin_validator  # noqa: E402
from foundation import connections, security, warmup  # noqa: E402
from integrations_app.mcp_server import WithMcp  # noqa: E402

# Daphne's own command line: a server that would take any client's word for its address does not start.
security.refuse_unsafe_proxy_headers(sys.argv)
server.install()
accepting.install(share=settings.WEB_ACCEPT_SHARE, pause_s=settings.WEB_ACCEPT_PAUSE_S)
connections.install()
django_asgi_app = ConnectionSafeASGIHandler()

application = ProtocolTypeRouter(
    {
        # /mcp: the MCP server (integrations_app.mcp_server), beside Django rather than through it.
        "http": WithMcp(django_asgi_app),
        "websocket": origin_validator(auth_stack(URLRouter(websocket_urlpatterns))),
    }
)
# The model loaded and the indexes read while the first requests are already answered.
warmup.warm_up_in_background()
