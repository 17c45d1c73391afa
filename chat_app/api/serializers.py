"""Request and response shapes of the Chat API."""

from __future__ import annotations

from django.conf import settings
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from foundation.api import reject_nul
from foundation.schema import non_blank_text
from retrieval_app.wire import ContextItemSerializer


@extend_schema_field(non_blank_text(settings.CHAT_MESSAGE_MAX_CHARS))
class ChatMessageField(serializers.CharField):
    """Emptiness and length are checked by the pipeline, so every transport gives the same error; the
    schema states them all the same."""

    def run_validation(self, data=serializers.empty):
        # Let an empty message through to the pipeline's own error (allow_blank would also put "" in the schema).
        if data == "":
            return data
        return super().run_validation(data)


class HistoryTurnSerializer(serializers.Serializer):
    role = serializers.ChoiceField(choices=["user", "assistant", "system"])
    content = serializers.CharField(trim_whitespace=False, max_length=100_000, validators=[reject_nul])


class ChatInSerializer(serializers.Serializer):
    message = ChatMessageField(trim_whitespace=False, validators=[reject_nul])
    history = HistoryTurnSerializer(many=True, required=False, default=list, max_length=200)
    doc_id = serializers.CharField(max_length=64, required=False, allow_null=True, allow_blank=True, default=None)
    doc_ids = serializers.ListField(
        child=serializers.CharField(max_length=64),
        required=False,
        default=list,
        max_length=100,
        help_text="Several documents to answer from (with doc_id, if given); memories are left out then.",
    )
    session_id = serializers.CharField(max_length=64, required=False, allow_null=True, allow_blank=True, default=None)
    agent_id = serializers.CharField(
        max_length=128, required=False, allow_blank=True, default="", validators=[reject_nul]
    )
    debug_search_trace = serializers.BooleanField(required=False, default=False)
    replace_last = serializers.BooleanField(
        required=False,
        default=False,
        help_text=(
            "Regenerate or edit-and-resend: this message replaces the session's last question and its answer "
            "(needs session_id; 409 already_committed if that exchange is already archived)."
        ),
    )


class RememberedSerializer(serializers.Serializer):
    """A memory noted from the message being answered."""

    id = serializers.IntegerField()
    uri = serializers.CharField()
    category = serializers.CharField()
    key = serializers.CharField()
    content = serializers.CharField()
    change = serializers.ChoiceField(
        choices=["created", "updated", "unchanged"], help_text="New, a new text for a known key, or already known."
    )
    previous = serializers.CharField(required=False, help_text="For an update: the text it replaced.")


class ChatOutSerializer(serializers.Serializer):
    message = serializers.CharField()
    context = ContextItemSerializer(many=True)
    session_id = serializers.CharField()
    retrieval_error = serializers.CharField(required=False)
    search_trace = serializers.DictField(required=False)
    prompt_tokens = serializers.IntegerField(required=False)
    mood = serializers.ChoiceField(
        choices=["confident", "uncertain", "apologetic"],
        help_text=(
            "confident: grounded in a passage judged relevant (or nothing was asked); uncertain: only weakly "
            "relevant passages, or none; apologetic: a failure."
        ),
    )
    mood_reason = serializers.CharField(help_text="Why the answer has this mood, in plain words.")
    remembered = RememberedSerializer(
        many=True, required=False, help_text="The memories noted from this message as it was said."
    )
