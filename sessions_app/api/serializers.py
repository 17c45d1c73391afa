"""Request validation and response shapes of the Sessions and Memory API."""

from __future__ import annotations

import json

from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from config.api import reject_nul
from config.schema import JSON_OBJECT, non_blank_text
from sessions_app.models import Memory, Message
from sessions_app.selectors import RECALL_STRATEGIES


@extend_schema_field(JSON_OBJECT)
class JSONObjectField(serializers.JSONField):
    """A JSON object (not a list or a scalar), kept exactly as given."""

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if not isinstance(value, dict):
            raise serializers.ValidationError("must be a JSON object.")
        text = json.dumps(value, ensure_ascii=False)
        if "\\u0000" in text or "\x00" in text:
            raise serializers.ValidationError("must not contain NUL characters.")
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:  # a lone UTF-16 surrogate, which PostgreSQL cannot store
            raise serializers.ValidationError("must be valid Unicode text.") from exc
        return value


class SessionCreateSerializer(serializers.Serializer):
    title = serializers.CharField(max_length=255, required=False, default="", allow_blank=True, validators=[reject_nul])
    agent_id = serializers.CharField(
        max_length=128, required=False, default="", allow_blank=True, validators=[reject_nul]
    )
    metadata = JSONObjectField(required=False, default=dict)


class SessionUpdateSerializer(serializers.Serializer):
    title = serializers.CharField(max_length=255, required=False, allow_blank=True, validators=[reject_nul])
    metadata = JSONObjectField(required=False)


class SessionSerializer(serializers.Serializer):
    session_id = serializers.UUIDField(source="id")
    title = serializers.CharField()
    agent_id = serializers.CharField()
    metadata = serializers.JSONField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()
    last_message_at = serializers.DateTimeField(allow_null=True)
    committed_at = serializers.DateTimeField(allow_null=True)
    message_count = serializers.IntegerField(required=False)


@extend_schema_field(non_blank_text(settings.MESSAGE_MAX_CHARS))
class MessageContentField(serializers.CharField):
    """A message's text, kept exactly as given (spaces included); checked by ``validate_content``."""


class MessageInSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=Message.Role.values)
    content = MessageContentField(trim_whitespace=False, validators=[reject_nul])
    created_at = serializers.DateTimeField(required=False)
    metadata = JSONObjectField(required=False, default=dict)

    def validate_content(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError("must not be empty.")
        if len(value) > settings.MESSAGE_MAX_CHARS:
            raise serializers.ValidationError(
                f"is {len(value)} characters long; the limit is {settings.MESSAGE_MAX_CHARS}."
            )
        return value


class MessagesInSerializer(serializers.Serializer):
    messages = serializers.ListField(child=MessageInSerializer(), min_length=1, max_length=1000)


class MessageSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    seq = serializers.IntegerField()
    role = serializers.ChoiceField(choices=Message.Role.values)
    content = serializers.CharField()
    created_at = serializers.DateTimeField()
    token_count = serializers.IntegerField()
    metadata = serializers.JSONField()
    archive_uri = serializers.CharField(source="archive.uri", allow_null=True, default=None)
    embedded = serializers.BooleanField(required=False)


class ArchiveSerializer(serializers.Serializer):
    uri = serializers.CharField()
    index = serializers.IntegerField()
    abstract = serializers.CharField()
    overview = serializers.CharField()
    overview_sections = serializers.JSONField(source="overview_data")
    message_count = serializers.IntegerField()
    first_seq = serializers.IntegerField()
    last_seq = serializers.IntegerField()
    created_at = serializers.DateTimeField()


class SessionDetailSerializer(SessionSerializer):
    rolling_summary = serializers.CharField()
    messages = MessageSerializer(many=True)
    archives = ArchiveSerializer(many=True)


class CommitInSerializer(serializers.Serializer):
    keep_recent = serializers.IntegerField(min_value=0, max_value=100_000, required=False, default=0)


class ContextQuerySerializer(serializers.Serializer):
    query = serializers.CharField(
        required=False, default="", allow_blank=True, max_length=10_000, validators=[reject_nul]
    )
    max_archives = serializers.IntegerField(required=False, default=3, min_value=0, max_value=50)
    max_messages = serializers.IntegerField(required=False, default=20, min_value=0, max_value=1000)


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
        help_text="How to rank: dense, keyword (ts_rank), bm25, rrf or blend (the default: RECALL_STRATEGY).",
    )


# Query strings are validated as plain dicts (see the views), so an empty parameter is a value like any
# other: ``?category=`` is a wrong category, a 400, never silently "every category".


class _AgentFilterSerializer(serializers.Serializer):
    agent_id = serializers.CharField(
        max_length=128,
        required=False,
        allow_blank=True,
        validators=[reject_nul],
        help_text="Only this agent's; empty or absent: every agent's.",
    )

    def validate_agent_id(self, value: str) -> str | None:
        # Empty means no filter: a form with an empty agent box still sends the parameter.
        return value or None


def _search_words(help_text: str) -> serializers.CharField:
    """The ``q`` of a list: optional, empty meaning no search."""
    return serializers.CharField(
        max_length=500, required=False, allow_blank=True, default="", validators=[reject_nul], help_text=help_text
    )


class SessionListQuerySerializer(_AgentFilterSerializer):
    q = _search_words("Keep sessions whose title contains this, or with a message matching its words.")


class MemoryQuerySerializer(_AgentFilterSerializer):
    category = serializers.ChoiceField(choices=Memory.Category.values, required=False)
    q = _search_words("Keep memories whose key or text contain this, or match its words.")


class MemoryUpdateSerializer(serializers.Serializer):
    content = serializers.CharField(max_length=10_000, validators=[reject_nul])

    def validate_content(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError("must not be empty.")
        return value.strip()


class _OriginSessionField(serializers.UUIDField):
    """The session a memory came from: its archive's, else (noted in a chat turn, not archived yet)
    the session of the turn it was drawn from."""

    def get_attribute(self, instance: Memory):
        if instance.source_archive_id is not None:
            return instance.source_archive.session_id
        if hasattr(instance, "source_session_id"):  # read with the list, in the same query
            return instance.source_session_id
        return instance.source_messages.order_by("id").values_list("session_id", flat=True).first()


class MemorySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    uri = serializers.CharField()
    category = serializers.ChoiceField(choices=Memory.Category.values)
    key = serializers.CharField()
    content = serializers.CharField()
    agent_id = serializers.CharField()
    history = serializers.JSONField()
    source_archive_uri = serializers.CharField(source="source_archive.uri", allow_null=True, default=None)
    session_id = _OriginSessionField(allow_null=True, default=None, help_text="The session it came from.")
    source_message_id = serializers.IntegerField(
        allow_null=True, default=None, help_text="The first turn it was drawn from, in that session."
    )
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class WorkingSetUpdateSerializer(serializers.Serializer):
    resolved_terms = serializers.DictField(
        child=serializers.CharField(max_length=2000, validators=[reject_nul]), required=False, default=dict
    )
    active_documents = serializers.ListField(
        child=serializers.CharField(max_length=512, validators=[reject_nul]),
        required=False,
        default=list,
        max_length=50,
    )
    active_sections = serializers.ListField(
        child=serializers.CharField(max_length=512, validators=[reject_nul]),
        required=False,
        default=list,
        max_length=100,
    )
