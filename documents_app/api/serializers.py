"""Request validation and response shapes of the Documents API."""

from __future__ import annotations

from rest_framework import serializers

from config.api import reject_nul
from documents_app.models import Document
from documents_app.selectors import LEVELS


class UploadSerializer(serializers.Serializer):
    file = serializers.FileField(allow_empty_file=True)
    title = serializers.CharField(max_length=512, required=False, allow_blank=True, default="", validators=[reject_nul])


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


class DocumentDetailSerializer(DocumentSerializer):
    abstract = serializers.CharField()
    overview = serializers.CharField()


class LsQuerySerializer(serializers.Serializer):
    uri = serializers.CharField(max_length=1024)
    offset = serializers.IntegerField(required=False, default=0, min_value=0)
    limit = serializers.IntegerField(required=False, default=500, min_value=1, max_value=5000)


class ReadQuerySerializer(serializers.Serializer):
    uri = serializers.CharField(max_length=1024)
    level = serializers.ChoiceField(choices=LEVELS, required=False, default="L1")
