"""Request and response shapes of the Retrieval API."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema_field
from rest_framework import serializers

from foundation.api import reject_nul
from foundation.schema import non_blank_text, viking_uri
from retrieval_app.recall import RECALL_STRATEGIES
from retrieval_app.wire import HIT_SERIALIZERS

MAX_LIMIT = 100


@extend_schema_field(non_blank_text(settings.QUERY_MAX_CHARS))
class QueryField(serializers.CharField):
    """Emptiness and length are checked by the service, so that chat and search share one limit and
    one error; the schema states them all the same."""


@extend_schema_field(viking_uri(512))
class TargetUriField(serializers.CharField):
    """The viking:// URI to search under; the service refuses any other, and another user's."""


class FindInSerializer(serializers.Serializer):
    query = QueryField(trim_whitespace=False, validators=[reject_nul])
    target_uri = TargetUriField(
        max_length=512, required=False, allow_blank=True, allow_null=True, default=None, validators=[reject_nul]
    )
    limit = serializers.IntegerField(min_value=1, max_value=MAX_LIMIT, default=5)
    score_threshold = serializers.FloatField(
        min_value=0.0, max_value=10.0, required=False, allow_null=True, default=None
    )
    debug_search_trace = serializers.BooleanField(required=False, default=False)
    mode = serializers.ChoiceField(
        choices=["hierarchical", "flat"],
        required=False,
        allow_blank=True,
        default="",
        help_text="hierarchical (directory descent, the default) or flat (chunks ranked directly).",
    )
    fusion = serializers.ChoiceField(
        choices=["blend", "rrf"],
        required=False,
        default="blend",
        help_text="For flat: calibrated blend of similarity and keyword coverage, or reciprocal rank fusion.",
    )


class SearchInSerializer(FindInSerializer):
    session_id = serializers.CharField(max_length=64, validators=[reject_nul])


class FindOutSerializer(serializers.Serializer):
    results = PolymorphicProxySerializer(
        component_name="Hit",
        serializers=HIT_SERIALIZERS,
        resource_type_field_name="origin",
        many=True,
    )
    trace_id = serializers.CharField()
    search_trace = serializers.DictField(required=False)


class SearchOutSerializer(FindOutSerializer):
    query_plan = serializers.DictField()


@extend_schema_field(non_blank_text(10_000))
class RecallQueryField(serializers.CharField):
    """Trimmed, so a query of spaces only is blank and refused."""


class RecallInSerializer(serializers.Serializer):
    query = RecallQueryField(max_length=10_000, validators=[reject_nul])
    agent_id = serializers.CharField(
        max_length=128, required=False, allow_blank=True, default=None, validators=[reject_nul]
    )
    exclude_session_id = serializers.UUIDField(required=False, allow_null=True, default=None)
    max_results = serializers.IntegerField(required=False, default=10, min_value=1, max_value=100)
    max_tokens = serializers.IntegerField(required=False, default=2000, min_value=1, max_value=100_000)
    threshold = serializers.FloatField(required=False, allow_null=True, default=None, min_value=-1.0, max_value=1.0)
    strategy = serializers.ChoiceField(
        choices=RECALL_STRATEGIES,
        required=False,
        allow_blank=True,
        default="",
        help_text="How to rank: learned (every signal, fused), rrf, blend, dense, bm25 or keyword (ts_rank); "
        "the default is RECALL_STRATEGY.",
    )
