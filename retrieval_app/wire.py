"""The wire format of hits: one serializer per kind of hit, used both to render answers (find, search,
the chat's context event) and to document them in the OpenAPI schema."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rest_framework import serializers

from retrieval_app.hits import Hit


class DocumentHitSerializer(serializers.Serializer):
    uri = serializers.CharField()
    doc_id = serializers.CharField(allow_null=True)
    chunk_id = serializers.CharField(allow_null=True)
    level = serializers.CharField(help_text="The tier `text` comes from: L1, L0, L2 or match_reason.")
    text = serializers.CharField()
    abstract = serializers.CharField()
    overview = serializers.CharField()
    content = serializers.CharField(help_text="The full text (L2) of a chunk, memory or message.")
    title = serializers.CharField()
    kind = serializers.CharField(help_text="chunk, section or document; memory; or message.")
    # One value per kind of hit, so that a client (and the schema's oneOf) tells the kinds apart by it.
    origin = serializers.ChoiceField(choices=["document"])
    score = serializers.FloatField()
    source = serializers.ChoiceField(choices=["semantic", "keyword", "hybrid", "memory"])
    match_reason = serializers.CharField()


class MemoryHitSerializer(DocumentHitSerializer):
    """A long-term memory (``origin: "memory"``)."""

    origin = serializers.ChoiceField(choices=["memory"])


class ConversationHitSerializer(DocumentHitSerializer):
    """A turn of an earlier conversation (``origin: "conversation"``), with its session and time."""

    origin = serializers.ChoiceField(choices=["conversation"])
    session_id = serializers.CharField()
    created_at = serializers.CharField()


class ContextItemSerializer(serializers.Serializer):
    """A hit as the chat's ``context`` event carries it: what the prompt used, without the full text."""

    uri = serializers.CharField()
    doc_id = serializers.CharField(allow_null=True)
    chunk_id = serializers.CharField(allow_null=True)
    level = serializers.CharField()
    text = serializers.CharField()
    abstract = serializers.CharField()
    overview = serializers.CharField()
    score = serializers.FloatField()
    source = serializers.CharField()
    match_reason = serializers.CharField()
    title = serializers.CharField()
    origin = serializers.CharField()
    kind = serializers.CharField(help_text="chunk, section or document; memory; or message.")
    session_id = serializers.CharField(allow_null=True, help_text="For an earlier conversation: its session.")
    created_at = serializers.CharField(allow_null=True, help_text="For an earlier conversation: when it was said.")


HIT_SERIALIZERS = {
    "document": DocumentHitSerializer,
    "memory": MemoryHitSerializer,
    "conversation": ConversationHitSerializer,
}


def render_hits(hits: Sequence[Hit]) -> list[dict[str, Any]]:
    return [dict(HIT_SERIALIZERS[hit.origin](hit).data) for hit in hits]


def render_context(hits: Sequence[Hit]) -> list[dict[str, Any]]:
    return [dict(ContextItemSerializer(hit).data) for hit in hits]
