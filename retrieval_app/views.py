"""The browser chat page: the websocket client for a signed-in user."""

from __future__ import annotations

from django.contrib.auth.mixins import LoginRequiredMixin
from django.views.generic import TemplateView

from documents_app.selectors import document_list


class ChatPageView(LoginRequiredMixin, TemplateView):
    template_name = "chat.html"

    def get_context_data(self, **kwargs):
        return {
            **super().get_context_data(**kwargs),
            "documents": document_list(owner=self.request.user).filter(status="ready"),
        }
