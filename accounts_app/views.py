"""The pages through which a person joins: an invitation's link (/join/<key>/), and, when the operator
allows it, a request for an account (/accounts/sign-up/). Thin: the forms validate, the services decide.

Both pages are CSRF-protected forms, throttled per address (throttle.JoinRateThrottle), and never cached."""

from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth import views as auth_views
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.utils.decorators import method_decorator
from django.views import View
from django.views.decorators.cache import never_cache

from accounts_app import selectors, services
from accounts_app.exceptions import InvitationUnusable, TooManyPendingRequests, UsernameTaken
from accounts_app.forms import JoinForm, SignUpForm
from accounts_app.throttle import JoinRateThrottle

SIGN_UP_APPROVAL = "approval"
# The backend the new account is signed in with (the first configured: a username and a password).
SIGN_IN_BACKEND = "django.contrib.auth.backends.ModelBackend"


def sign_up_open() -> bool:
    return settings.SIGN_UP_MODE == SIGN_UP_APPROVAL


def _throttled(request: HttpRequest, template: str, form) -> HttpResponse | None:
    throttle = JoinRateThrottle()
    if throttle.allow_request(request, None):
        return None
    wait = int(throttle.wait() or 60) + 1
    form.add_error(None, f"Too many tries from this address; try again in {wait} seconds.")
    response = render(request, template, {"form": form}, status=429)
    response["Retry-After"] = str(wait)
    return response


@method_decorator(never_cache, name="dispatch")
class JoinView(View):
    """An invited person picks a username and a password and lands in the app, signed in."""

    template_name = "accounts/join.html"

    def get(self, request: HttpRequest, key: str) -> HttpResponse:
        try:
            invitation = selectors.invitation_for_key(key=key)
        except InvitationUnusable as error:
            return _unusable(request, error)
        return render(request, self.template_name, {"form": JoinForm(), "invitation": invitation})

    def post(self, request: HttpRequest, key: str) -> HttpResponse:
        form = JoinForm(request.POST)
        throttled = _throttled(request, self.template_name, form)
        if throttled:
            return throttled
        try:
            invitation = selectors.invitation_for_key(key=key)
        except InvitationUnusable as error:
            return _unusable(request, error)
        if form.is_valid():
            try:
                user = services.invitation_accept(
                    key=key, username=form.cleaned_data["username"], password=form.cleaned_data["password1"]
                )
            except InvitationUnusable as error:
                return _unusable(request, error)
            except UsernameTaken as error:
                form.add_error("username", error.message)
            else:
                login(request, user, backend=SIGN_IN_BACKEND)
                messages.success(request, f"Welcome to Recollect, {user.get_username()}.")
                return redirect(settings.LOGIN_REDIRECT_URL)
        return render(request, self.template_name, {"form": form, "invitation": invitation}, status=400)


def _unusable(request: HttpRequest, error: InvitationUnusable) -> HttpResponse:
    return render(request, "accounts/unusable.html", {"message": error.message}, status=404)


@method_decorator(never_cache, name="dispatch")
class SignUpView(View):
    """A person asks for an account (SIGN_UP_MODE=approval); they can sign in once staff approve it.

    Every valid request is answered alike, whether its name was free or taken, so the page tells no one
    which accounts exist."""

    template_name = "accounts/sign_up.html"

    def dispatch(self, request: HttpRequest, *args, **kwargs) -> HttpResponse:
        if not sign_up_open():
            raise Http404("Sign-up is closed.")
        return super().dispatch(request, *args, **kwargs)

    def get(self, request: HttpRequest) -> HttpResponse:
        return render(request, self.template_name, {"form": SignUpForm()})

    def post(self, request: HttpRequest) -> HttpResponse:
        form = SignUpForm(request.POST)
        throttled = _throttled(request, self.template_name, form)
        if throttled:
            return throttled
        if form.is_valid():
            data = form.cleaned_data
            try:
                services.account_request_create(
                    username=data["username"], password=data["password1"], note=data["note"]
                )
            except TooManyPendingRequests as error:
                form.add_error(None, error.message)
            else:
                return render(request, "accounts/sign_up_sent.html")
        return render(request, self.template_name, {"form": form}, status=400)


class LoginView(auth_views.LoginView):
    """Django's sign-in page, offering to ask for an account when the operator allows it."""

    def get_context_data(self, **kwargs):
        return {**super().get_context_data(**kwargs), "sign_up_open": sign_up_open()}
