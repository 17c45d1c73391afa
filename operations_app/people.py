"""The operators' page for people joining (/admin/ops/people/): make a one-time invitation link (shown
once), withdraw one, see who used which; approve or refuse requests for an account. Staff who may add
users (the admin's "add user" permission; superusers have it) see it. Thin: accounts_app decides."""

from __future__ import annotations

import uuid

from django.conf import settings
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse

from accounts_app import selectors, services
from accounts_app.exceptions import InvalidInvitation, InvitationUnusable, RequestAlreadyDecided, UsernameTaken
from accounts_app.models import NOTE_MAX_CHARS

PEOPLE_PERMISSION = "auth.add_user"
DEFAULT_DAYS = 7


def people(request: HttpRequest) -> HttpResponse:
    if not request.user.has_perm(PEOPLE_PERMISSION):
        raise PermissionDenied
    context: dict = {}
    if request.method == "POST":
        action = request.POST.get("action", "")
        if action == "invite":
            context = _invite(request)
        else:
            _decide(request, action)
            return redirect("ops-people")
    return render(request, "admin/ops/people.html", {**_page(request), **context})


def _page(request: HttpRequest) -> dict:
    return {
        **admin.site.each_context(request),
        "title": "People",
        "invitations": selectors.invitation_list(),
        "pending": selectors.account_request_pending(),
        "decided": selectors.account_request_decided(),
        "sign_up_mode": settings.SIGN_UP_MODE,
        "max_days": services.INVITATION_MAX_DAYS,
        "default_days": DEFAULT_DAYS,
        "note_max": NOTE_MAX_CHARS,
    }


def _invite(request: HttpRequest) -> dict:
    """Makes an invitation and returns its link, for this response alone (it is never shown again)."""
    days = request.POST.get("days", "")
    try:
        new = services.invitation_create(
            created_by=request.user,
            days=int(days) if days.isdigit() else 0,
            note=request.POST.get("note", "")[:NOTE_MAX_CHARS],
        )
    except InvalidInvitation as error:
        messages.error(request, error.message)
        return {}
    link = request.build_absolute_uri(reverse("join", kwargs={"key": new.key}))
    return {"new_link": link, "new_invitation": new.invitation}


def _decide(request: HttpRequest, action: str) -> None:
    try:
        target = uuid.UUID(request.POST.get("id", ""))
    except ValueError:
        messages.error(request, "No such invitation or request.")
        return
    try:
        if action == "revoke":
            invitation = services.invitation_revoke(invitation_id=target)
            messages.success(request, f"The invitation {invitation} was withdrawn.")
        elif action == "approve":
            decided = services.account_request_approve(request_id=target, decided_by=request.user)
            messages.success(request, f"The account {decided.username} is made: they can sign in now.")
        elif action == "refuse":
            decided = services.account_request_refuse(request_id=target, decided_by=request.user)
            messages.success(request, f"The request of {decided.username} was refused.")
        else:
            messages.error(request, "Unknown action.")
    except (InvitationUnusable, RequestAlreadyDecided, UsernameTaken) as error:
        messages.error(request, error.message)
