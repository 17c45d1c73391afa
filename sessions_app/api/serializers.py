"""Request validation and response shapes of the Sessions and Memory API."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from foundation.ai.memories import label
from foundation.api import reject_nul, storable_json, storable_text
from foundation.parsers import json_within_depth
from foundation.schema import JSON_OBJECT, non_blank_text
from sessions_app.models import Memory, Message


@extend_schema_field(JSON_OBJECT)
class JSONObjectField(serializers.JSONField):
    """A JSON object (not a list or a scalar), kept exactly as given: at most JSON_VALUE_MAX_DEPTH levels
    deep and METADATA_MAX_BYTES long, every key and string storable text."""

    def to_internal_value(self, data):
        value = super().to_internal_value(data)
        if not isinstance(value, dict):
            raise serializers.ValidationError("must be a JSON object.")
        return storable_json(value, max_bytes=settings.METADATA_MAX_BYTES)


class ShownJSONField(serializers.JSONField):
    """Metadata as answered: kept before depth was limited, a value nested too deep is answered cut (the
    deeper parts replaced by a note) rather than failing the whole answer."""

    def to_representation(self, value):
        return json_within_depth(value)


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
    metadata = ShownJSONField()
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
    metadata = ShownJSONField()
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


def _cursor(help_text: str) -> serializers.CharField:
    return serializers.CharField(allow_null=True, help_text=help_text)


class SessionDetailSerializer(SessionSerializer):
    rolling_summary = serializers.CharField()
    messages = MessageSerializer(many=True, help_text="The latest messages, oldest first.")
    messages_previous = _cursor("Cursor of the messages before these; null when these start at the first.")
    messages_next = _cursor("Cursor of messages after these; null (these are the latest).")
    messages_count = serializers.IntegerField(help_text="How many messages the session has in all.")
    archives = ArchiveSerializer(many=True, help_text="The latest archives, oldest first.")
    archives_previous = _cursor("Cursor of the archives before these; null when these start at the first.")
    archives_next = _cursor("Cursor of archives after these; null (these are the latest).")
    archives_count = serializers.IntegerField(help_text="How many archives the session has in all.")


class _PageSerializer(serializers.Serializer):
    count = serializers.IntegerField(help_text="How many there are in all.")
    previous = _cursor("Cursor of the page before this one; null at the first.")
    next = _cursor("Cursor of the page after this one; null at the last.")


class MessagePageSerializer(_PageSerializer):
    results = MessageSerializer(many=True)


class ArchivePageSerializer(_PageSerializer):
    results = ArchiveSerializer(many=True)


class CommitInSerializer(serializers.Serializer):
    keep_recent = serializers.IntegerField(min_value=0, max_value=100_000, required=False, default=0)


class ContextQuerySerializer(serializers.Serializer):
    query = serializers.CharField(
        required=False, default="", allow_blank=True, max_length=10_000, validators=[reject_nul]
    )
    max_archives = serializers.IntegerField(required=False, default=3, min_value=0, max_value=50)
    max_messages = serializers.IntegerField(required=False, default=20, min_value=0, max_value=1000)


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


MEMORY_CONTENT_MAX_CHARS = 10_000


class MemoryUpdateSerializer(serializers.Serializer):
    content = serializers.CharField(max_length=MEMORY_CONTENT_MAX_CHARS, validators=[reject_nul])

    def validate_content(self, value: str) -> str:
        if not value.strip():
            raise serializers.ValidationError("must not be empty.")
        return value.strip()


class MemoryCreateSerializer(serializers.Serializer):
    category = serializers.ChoiceField(choices=Memory.Category.values)
    content = serializers.CharField(
        max_length=MEMORY_CONTENT_MAX_CHARS,
        validators=[reject_nul],
        help_text='What to remember, best as a sentence about the user: "Prefers oat milk in coffee."',
    )
    key = serializers.CharField(
        max_length=255,
        required=False,
        allow_blank=True,
        default="",
        validators=[reject_nul],
        help_text='The subject, stable across conversations ("oat_milk_in_coffee"); derived from the content '
        "when absent. A memory with this category and key is updated in place.",
    )
    agent_id = serializers.CharField(
        max_length=128, required=False, allow_blank=True, default="", validators=[reject_nul]
    )


class MemorySerializer(serializers.Serializer):
    id = serializers.IntegerField()
    uri = serializers.CharField()
    category = serializers.ChoiceField(choices=Memory.Category.values)
    key = serializers.CharField()
    label = serializers.SerializerMethodField(help_text='The key as a person reads it: "Oat milk in coffee".')
    content = serializers.CharField()
    agent_id = serializers.CharField()
    history = serializers.JSONField()
    source_archive_uri = serializers.CharField(source="source_archive.uri", allow_null=True, default=None)
    session_id = serializers.SerializerMethodField(
        help_text="The session it came from: its archive's, else that of the turn it was drawn from (a memory "
        "noted during a chat); null for a memory added by hand."
    )
    source_message_id = serializers.IntegerField(
        allow_null=True, default=None, help_text="The first turn it was drawn from, in that session."
    )
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()

    def get_label(self, memory: Memory) -> str:
        return label(memory.key, memory.content)

    @extend_schema_field(serializers.UUIDField(allow_null=True))
    def get_session_id(self, memory: Memory) -> str | None:
        if memory.source_archive_id is not None:
            return str(memory.source_archive.session_id)
        session_id = getattr(memory, "source_session_id", None)
        return str(session_id) if session_id else None


# A resolved term is a word or phrase of a conversation ("it", "the blue kettle").
TERM_MAX_CHARS = 200


class ResolvedTermsField(serializers.DictField):
    """Terms and what they stand for; the terms are checked like the values, since both are kept and
    handed to every later search of the session."""

    child = serializers.CharField(max_length=2000, validators=[reject_nul])

    def to_internal_value(self, data):
        terms = super().to_internal_value(data)
        for term in terms:
            if not term.strip() or len(term) > TERM_MAX_CHARS:
                raise serializers.ValidationError(f"a term must be 1 to {TERM_MAX_CHARS} characters long.")
            try:
                storable_text(term)
            except serializers.ValidationError as exc:
                raise serializers.ValidationError(f"a term {exc.detail[0]}") from exc
        return terms


class WorkingSetUpdateSerializer(serializers.Serializer):
    resolved_terms = ResolvedTermsField(required=False, default=dict)
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
