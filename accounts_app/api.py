"""The accounts API: signing in for a key (``POST /api/auth/token``)."""

from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.settings import api_settings

from foundation.security import ClientAddressThrottle


class TokenView(ObtainAuthToken):
    """``POST /api/auth/token`` with ``{username, password}``: a new sign-in key, rate-limited per client
    address. DRF makes the key; ``accounts_app.tokens.drf_token_saved`` keeps only its digest, so
    the key is in this answer alone; earlier keys keep working."""

    throttle_classes = [ClientAddressThrottle]
    throttle_scope = "auth"
    # ObtainAuthToken brings DRF's plain parsers; the API's own refuse what it refuses everywhere else.
    parser_classes = api_settings.DEFAULT_PARSER_CLASSES
