"""This app's routes: the OpenAI-compatible API, mounted at /v1/ by config.urls."""

from django.urls import path, re_path

from integrations_app import openai_api

openai_patterns = [
    path("models", openai_api.ModelsView.as_view(), name="openai-models"),
    path("models/<path:model_id>", openai_api.ModelView.as_view(), name="openai-model"),
    path("chat/completions", openai_api.ChatCompletionsView.as_view(), name="openai-chat-completions"),
    # Anything else under /v1/ answers in OpenAI's error shape.
    re_path(r"^.*$", openai_api.not_found),
]
