"""Request validation and response shapes of the Documents API."""

from __future__ import annotations

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from documents_app.models import Document
from documents_app.selectors import LEVELS
from documents_app.titles import MAX_TITLE_CHARS
from foundation.api import reject_nul
from foundation.schema import non_blank_text, viking_uri


class UploadSerializer(serializers.Serializer):
    file = serializers.FileField(allow_empty_file=True)
    title = serializers.CharField(
        max_length=MAX_TITLE_CHARS, required=False, allow_blank=True, default="", validators=[reject_nul]
    )


@extend_schema_field(non_blank_text(MAX_TITLE_CHARS))
class TitleField(serializers.CharField):
    """Trimmed, so a title of spaces only is blank and refused; runs of white space fold into one."""


class RenameSerializer(serializers.Serializer):
    title = TitleField(max_length=MAX_TITLE_CHARS, validators=[reject_nul])


class QueuePlaceSerializer(serializers.Serializer):
    place = serializers.IntegerField()
    estimated_wait_s = serializers.FloatField()


class DocumentSerializer(serializers.Serializer):
    doc_id = serializers.UUIDField(source="id")
    uri = serializers.CharField()
    title = serializers.CharField()
    filename = serializers.CharField()
    media_type = serializers.CharField()
    size_bytes = serializers.IntegerField()
    status = serializers.ChoiceField(choices=Document.Status.values)
    error = serializers.CharField()
    node_count = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    indexed_at = serializers.DateTimeField(allow_null=True)
    queue = QueuePlaceSerializer(
        allow_null=True,
        required=False,
        help_text="While the document waits to be indexed: its place in your line (1: next) and the estimated "
        "wait in seconds; null otherwise.",
    )

    def to_representation(self, instance):
        data = super().to_representation(instance)
        data["queue"] = self.context.get("queue", {}).get(instance.pk)
        return data


class DocumentDetailSerializer(DocumentSerializer):
    abstract = serializers.CharField()
    overview = serializers.CharField()


@extend_schema_field(viking_uri(1024))
class UriField(serializers.CharField):
    """A viking:// URI; the selectors refuse any other, and another user's, with their own errors."""


class LsQuerySerializer(serializers.Serializer):
    uri = UriField(max_length=1024)
    offset = serializers.IntegerField(required=False, default=0, min_value=0)
    limit = serializers.IntegerField(required=False, default=500, min_value=1, max_value=5000)


class ReadQuerySerializer(serializers.Serializer):
    uri = UriField(max_length=1024)
    level = serializers.ChoiceField(choices=LEVELS, required=False, default="L1")
