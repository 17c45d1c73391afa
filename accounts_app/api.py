"""The accounts API: signing in for a key (``POST /api/auth/token``), and who is signed in (``GET /api/me``)."""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import APIView

from foundation.security import ClientAddressThrottle


class TokenView(ObtainAuthToken):
    """``POST /api/auth/token`` with ``{username, password}``: a new sign-in key, rate-limited per client
    address. DRF makes the key; ``accounts_app.tokens.drf_token_saved`` keeps only its digest, so
    the key is in this answer alone; earlier keys keep working."""

    throttle_classes = [ClientAddressThrottle]
    throttle_scope = "auth"
    # ObtainAuthToken brings DRF's plain parsers; the API's own refuse what it refuses everywhere else.
    parser_classes = api_settings.DEFAULT_PARSER_CLASSES


class MeView(APIView):
    """Who the key or the browser session belongs to. The id is the one in the person's own URIs
    (``viking://resources/users/{id}/...``, ``viking://user/{id}/memories/...``)."""

    @extend_schema(
        responses=inline_serializer(
            "Me",
            {
                "id": serializers.IntegerField(),
                "username": serializers.CharField(),
                "is_staff": serializers.BooleanField(),
            },
        ),
        summary="The signed-in person: their id (as in their URIs) and username",
    )
    def get(self, request: Request) -> Response:
        user = request.user
        return Response({"id": user.pk, "username": user.get_username(), "is_staff": user.is_staff})
