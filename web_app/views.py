"""The browser app's pages. Thin: each renders a template, and the page's script calls the JSON API with
the session cookie and CSRF token (and the websocket with the cookie). Only the account's forms
(password, API token) and sign-out are plain form posts."""

from __future__ import annotations

from datetime import timedelta

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import update_session_auth_hash
from django.contrib.auth import views as auth_views
from django.contrib.auth.mixins import LoginRequiredMixin
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse_lazy
from django.utils import timezone
from django.views.generic import TemplateView

from accounts_app.exceptions import TokenLimitReached
from accounts_app.tokens import (
    MAX_TOKENS_PER_USER,
    TOKEN_LIFETIME_DAYS,
    api_token_create,
    api_token_revoke,
    api_tokens_of,
    api_tokens_revoke_all,
    credentials_revoke_everywhere,
    named_token_count,
    sign_in_token_revoke,
)
from documents_app.models import Document
from documents_app.parsing import FORMATS
from documents_app.selectors import document_list
from documents_app.uris import user_root_uri
from foundation import ai
from foundation.ai.embeddings import active_embedding_model
from foundation.exceptions import DomainError
from foundation.security import PasswordGuessThrottle, throttled_response
from sessions_app.models import Memory
from sessions_app.selectors import session_get


class _Page(LoginRequiredMixin, TemplateView):
    nav = ""

    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs), "nav": self.nav}


class ChatPageView(_Page):
    """The chat: the sidebar of conversations and one conversation, ``/chat/`` (a new one) or
    ``/chat/<session_id>`` (resumed with its history, so a reload or a shared link lands on it)."""

    template_name = "app/chat.html"
    nav = "chat"

    def get(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        session_id = self.kwargs.get("session_id")
        if session_id is not None:
            try:
                session_get(owner=request.user, session_id=session_id)
            except DomainError:
                # Another user's conversation is as missing as a deleted one; said on the app's own page.
                context = {"nav": "chat", "what": "conversation", "back": "/chat/", "back_label": "Start a new chat"}
                return render(request, "app/not_found.html", context, status=404)
        return super().get(request, *args, **kwargs)

    def get_context_data(self, **kwargs):
        session_id = self.kwargs.get("session_id")
        documents = document_list(owner=self.request.user).filter(status=Document.Status.READY)
        return {
            **super().get_context_data(**kwargs),
            "session_id": str(session_id) if session_id else "",
            "documents": documents.only("id", "title", "filename"),
            "scope": self.request.GET.get("doc", ""),
            "max_chars": settings.CHAT_MESSAGE_MAX_CHARS,
            # With the built-in engine, the page says once (until dismissed) how to configure a model.
            "engine": ai.text_engine().backend,
        }


class DocumentsPageView(_Page):
    template_name = "app/documents.html"
    nav = "documents"

    def get_context_data(self, **kwargs):
        extensions = sorted({ext for _, exts in FORMATS.values() for ext in exts if ext})
        return {
            **super().get_context_data(**kwargs),
            "max_bytes": settings.DOCUMENT_MAX_BYTES,
            "max_mb": round(settings.DOCUMENT_MAX_BYTES / 1024 / 1024, 1),
            "formats": ", ".join(name for name, _ in FORMATS.values()),
            "extensions": ",".join(extensions),
            "extensions_label": ", ".join(extensions),
            "root_uri": user_root_uri(self.request.user.id),
        }


class MemoriesPageView(_Page):
    template_name = "app/memories.html"
    nav = "memories"

    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs), "categories": Memory.Category.values}


# Where a new API key waits between its creation and the page that shows it (once).
NEW_TOKEN_SESSION_KEY = "recollect:new-api-key"  # noqa: S105 (a session key name, not a secret)


def _password_guess_refused(request: HttpRequest) -> HttpResponse | None:
    """A 429 once a person has confirmed their password too often (right or wrong), else None."""
    throttle = PasswordGuessThrottle()
    if throttle.allow_request(request, None):
        return None
    return throttled_response(throttle, "password attempts")


class AccountPageView(_Page):
    """Password, sign-out (here or everywhere), and API tokens: created with a name (the key shown
    once), listed, revoked one by one or all at once."""

    template_name = "app/account.html"
    nav = "account"

    def get_context_data(self, **kwargs):
        tokens = api_tokens_of(user=self.request.user)
        return {
            **super().get_context_data(**kwargs),
            "tokens": tokens,
            "named_count": named_token_count(tokens=tokens),
            "max_tokens": MAX_TOKENS_PER_USER,
            "lifetimes": TOKEN_LIFETIME_DAYS,
            "now": timezone.now(),
            "root_uri": user_root_uri(self.request.user.id),
        }

    def get(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        # A key just made is shown on the page the creation redirected to, once: a reload shows it no
        # more (and makes no second token, as re-sending the form would).
        created = request.session.pop(NEW_TOKEN_SESSION_KEY, None)
        context = self.get_context_data(**kwargs)
        if created:
            context |= {"new_key": created["key"], "new_token_name": created["name"]}
        return self.render_to_response(context)

    def post(self, request: HttpRequest) -> HttpResponse:
        action = request.POST.get("action")
        if action == "create":
            name = request.POST.get("name", "")[:100]
            days = request.POST.get("lifetime_days", "")
            lifetime = timedelta(days=int(days)) if days.isdigit() and int(days) in TOKEN_LIFETIME_DAYS else None
            try:
                token, key = api_token_create(user=request.user, name=name, lifetime=lifetime)
            except TokenLimitReached as error:
                messages.error(request, error.message)
                return redirect("account-page")
            request.session[NEW_TOKEN_SESSION_KEY] = {"key": key, "name": token.name}
            return redirect("account-page")
        if action == "sign-out-everywhere":
            return self._sign_out_everywhere(request)
        if action == "revoke":
            token_id = request.POST.get("token_id", "")
            revoked = token_id.isdigit() and api_token_revoke(user=request.user, token_id=int(token_id))
            messages.info(request, "The token was revoked." if revoked else "There was no such token to revoke.")
        elif action == "revoke-sign-in":
            revoked = sign_in_token_revoke(user=request.user)
            messages.info(request, "The sign-in tokens were revoked." if revoked else "There was no sign-in token.")
        elif action == "revoke-all":
            count = api_tokens_revoke_all(user=request.user)
            messages.info(request, f"{count} token{'s' if count != 1 else ''} revoked." if count else "No token.")
        return redirect("account-page")

    def _sign_out_everywhere(self, request: HttpRequest) -> HttpResponse:
        refused = _password_guess_refused(request)
        if refused is not None:
            return refused
        if not credentials_revoke_everywhere(user=request.user, password=request.POST.get("password", "")):
            messages.error(request, "That is not your password; nothing was changed.")
            return redirect("account-page")
        update_session_auth_hash(request, request.user)  # this browser alone stays signed in
        messages.success(request, "You are signed out everywhere else, and all your API tokens are revoked.")
        return redirect("account-page")


class SettingsPageView(_Page):
    """Which models answer and the feature flags in force. They come from the environment, so the page
    only shows them; staff also see where the models are reached."""

    template_name = "app/settings.html"
    nav = "settings"

    def get_context_data(self, **kwargs):
        engine = ai.text_engine()
        models = [
            (
                "Answers, summaries and memories",
                settings.LLM_MODEL or "Built-in extractive engine (quotes your own text; no language model)",
                settings.LLM_API_BASE,
            ),
            ("Embeddings", active_embedding_model(), settings.EMBEDDING_API_BASE),
            ("Embedding dimensions", str(settings.EMBEDDING_DIMENSIONS), ""),
        ]
        flags = [
            ("ENABLE_QUERY_REWRITING", settings.ENABLE_QUERY_REWRITING, "Rewrite follow-up questions"),
            ("ENABLE_SESSION_MEMORY", settings.ENABLE_SESSION_MEMORY, "Keep a working set per conversation"),
            ("ENABLE_HISTORY_SUMMARIZATION", settings.ENABLE_HISTORY_SUMMARIZATION, "Fold older turns into a summary"),
        ]
        limits = [
            ("AUTO_COMMIT_TURNS", settings.AUTO_COMMIT_TURNS, "Turns after which a conversation is remembered"),
            ("HISTORY_MAX_TURNS", settings.HISTORY_MAX_TURNS, "Turns the model sees verbatim"),
            ("RETRIEVAL_MODE", settings.RETRIEVAL_MODE, "How documents are searched"),
            ("CHAT_CONTEXT_HITS", settings.CHAT_CONTEXT_HITS, "Passages retrieved per turn"),
            ("CHAT_MOOD_CONFIDENT_SCORE", settings.CHAT_MOOD_CONFIDENT_SCORE, "Relevance of a 'confident' answer"),
            ("CHAT_RELEVANCE_FLOOR", settings.CHAT_RELEVANCE_FLOOR, "Relevance a passage needs to be quoted"),
            ("DOCUMENT_MAX_BYTES", settings.DOCUMENT_MAX_BYTES, "Largest upload, in bytes"),
        ]
        return {
            **super().get_context_data(**kwargs),
            "engine": engine.backend,
            "llm_model": settings.LLM_MODEL,
            "models": models,
            "flags": flags,
            "limits": limits,
            "staff": self.request.user.is_staff,
        }


class PasswordChangeView(auth_views.PasswordChangeView):
    template_name = "app/password_change.html"
    success_url = reverse_lazy("account-page")
    extra_context = {"nav": "account"}

    def post(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        # Each try is a guess at the old password by whoever holds this session.
        return _password_guess_refused(request) or super().post(request, *args, **kwargs)

    def form_valid(self, form):
        # Saving the new password ends every other browser's session and rotates the sign-in tokens
        # (accounts_app.tokens.user_saved); named tokens go too if the person asks.
        response = super().form_valid(form)
        revoked = api_tokens_revoke_all(user=self.request.user) if self.request.POST.get("revoke_tokens") else 0
        also = f" {revoked} API token{'s' if revoked != 1 else ''} revoked." if revoked else ""
        messages.success(
            self.request,
            f"Your password was changed. You are signed out everywhere else; sign-in tokens are revoked.{also}",
        )
        return response


class LogoutView(auth_views.LogoutView):
    """Sign-out is a POST (a link could be followed by anyone's page); a GET, from a bookmark or a typed
    address, gets a page with the button instead of a blank 405."""

    http_method_names = ["get", "post", "options"]
    next_page = "login"

    def get(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        return render(request, "app/logout.html", {"nav": ""})
