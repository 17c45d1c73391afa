"""``DELETE /api/me/data``: a person erases their own data and receives the receipt."""

from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from privacy_app.erasure import erasure_confirmed, user_data_erase

ReceiptSerializer = inline_serializer(
    "ErasureReceipt",
    {
        "user_id": serializers.IntegerField(),
        "username": serializers.CharField(),
        "account": serializers.ChoiceField(choices=["kept", "deleted"]),
        "started_at": serializers.DateTimeField(),
        "finished_at": serializers.DateTimeField(),
        "removed": serializers.DictField(child=serializers.IntegerField()),
        "anonymised": serializers.DictField(child=serializers.IntegerField()),
        "not_removed": serializers.ListField(child=serializers.DictField()),
        "complete": serializers.BooleanField(),
    },
)


class MyDataView(APIView):
    """Everything the signed-in person owns or that was made from it: erased at once, for good. The
    account stays, empty; every token and browser session of it ends (sign in again with the password)."""

    @extend_schema(
        parameters=[
            OpenApiParameter(
                "confirm", str, description="Your username, to confirm (or `confirm` in a JSON body)", required=True
            )
        ],
        responses={200: ReceiptSerializer},
        summary="Erase all my data, and answer the receipt",
    )
    def delete(self, request: Request) -> Response:
        body = request.data if isinstance(request.data, dict) else {}
        confirm = request.query_params.get("confirm") or str(body.get("confirm") or "")
        erasure_confirmed(user=request.user, confirm=confirm)
        return Response(user_data_erase(user=request.user).as_dict())
