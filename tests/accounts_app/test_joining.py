"""People join as the operator allows: by a one-time invitation staff make on the operators' page, or
(SIGN_UP_MODE=approval) by asking for an account that staff approve or refuse. Through the pages, with
the test client's CSRF checks on."""

from __future__ import annotations

import re
from datetime import timedelta

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission
from django.core.cache import cache
from django.test import Client
from django.utils import timezone

from accounts_app import services
from accounts_app.models import AccountRequest, Invitation
from tests.factories import ChatSessionFactory, MemoryFactory, UserFactory

pytestmark = pytest.mark.django_db
User = get_user_model()
GOOD_PASSWORD = "quiet larch 42 meadow"
LINK = re.compile(r'value="(http://testserver/join/([^/"]+)/)"')


@pytest.fixture(autouse=True)
def _fresh_throttles():
    cache.clear()
    yield
    cache.clear()


def _csrf_client() -> Client:
    return Client(enforce_csrf_checks=True)


def _post_form(client: Client, path: str, data: dict):
    """Posts a form as a browser would: the page first, then its CSRF token with the fields."""
    page = client.get(path)
    if page.status_code != 200:  # a refused page holds no form: the token of the sign-in page's
        page = client.get("/accounts/login/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.content.decode())
    return client.post(path, {**data, "csrfmiddlewaretoken": token[1]})


@pytest.fixture
def operator() -> Client:
    client = _csrf_client()
    client.force_login(UserFactory(username="olga", is_staff=True, is_superuser=True))
    return client


def _invite(operator: Client, **fields) -> str:
    page = _post_form(operator, "/admin/ops/people/", {"action": "invite", "days": "7", **fields})
    assert page.status_code == 200
    return LINK.search(page.content.decode())[1]


def _join(link: str, username: str = "mira", password: str = GOOD_PASSWORD):
    client = _csrf_client()
    path = link.removeprefix("http://testserver")
    return client, _post_form(client, path, {"username": username, "password1": password, "password2": password})


def test_an_invited_person_joins_as_an_ordinary_user_and_lands_in_the_chat(operator):
    link = _invite(operator, note="Mira, my sister")
    client, response = _join(link)
    assert response.status_code == 302 and response["Location"] == "/chat/"
    mira = User.objects.get(username="mira")
    assert not mira.is_staff and not mira.is_superuser and mira.is_active
    assert client.get("/chat/").status_code == 200  # signed in
    # The operator sees who used which link, and the link's key is nowhere in the database.
    people = operator.get("/admin/ops/people/").content.decode()
    assert "Mira, my sister" in people and ">mira</a>" in people and "used" in people
    key = link.rstrip("/").rsplit("/", 1)[1]
    assert not Invitation.objects.filter(key_digest=key).exists() and key not in people


def test_a_used_expired_or_withdrawn_link_is_refused(operator):
    used = _invite(operator)
    _join(used)
    client, again = _join(used, username="intruder")
    assert again.status_code == 404 and "cannot be used" in again.content.decode()
    assert client.get(used.removeprefix("http://testserver")).status_code == 404

    expired = _invite(operator)
    Invitation.objects.filter(used_at__isnull=True).update(expires_at=timezone.now() - timedelta(seconds=1))
    assert _join(expired, username="late")[1].status_code == 404

    withdrawn = _invite(operator)
    invitation = Invitation.objects.get(used_at__isnull=True, expires_at__gt=timezone.now())
    _post_form(operator, "/admin/ops/people/", {"action": "revoke", "id": str(invitation.pk)})
    assert _join(withdrawn, username="withdrawn")[1].status_code == 404
    assert _join("http://testserver/join/made-up-key/", username="guess")[1].status_code == 404
    assert set(User.objects.values_list("username", flat=True)) == {"olga", "mira"}


def test_a_weak_password_or_a_taken_name_is_said_and_the_link_stays_usable(operator):
    link = _invite(operator)
    UserFactory(username="mira")
    _, weak = _join(link, username="nico", password="12345678")
    assert weak.status_code == 400 and "too common" in weak.content.decode()
    _, taken = _join(link, username="MIRA")
    assert taken.status_code == 400 and "taken" in taken.content.decode()
    assert _join(link, username="nico")[1].status_code == 302


def test_joining_needs_the_forms_csrf_token(operator):
    link = _invite(operator).removeprefix("http://testserver")
    answer = _csrf_client().post(link, {"username": "mira", "password1": GOOD_PASSWORD, "password2": GOOD_PASSWORD})
    assert answer.status_code == 403 and not User.objects.filter(username="mira").exists()


def test_joining_is_throttled_per_address(operator, settings):
    settings.JOIN_THROTTLE_RATE = "3/hour"
    link = _invite(operator)
    answers = [_join(link, username="x", password="short")[1].status_code for _ in range(4)]
    assert answers == [400, 400, 400, 429]


def test_an_invited_user_sees_only_their_own_data(operator):
    owner = UserFactory()
    ChatSessionFactory(owner=owner, title="Owner's secret plans")
    MemoryFactory(owner=owner, content="Owner's vault code is 7741.")
    client, _ = _join(_invite(operator))
    for path in ("/api/sessions", "/api/memories"):
        answer = client.get(path)
        assert answer.status_code == 200 and answer.json()["results"] == []
    assert client.get("/admin/").status_code == 302  # not staff
    assert client.get("/admin/ops/people/").status_code == 302


def test_only_staff_who_may_add_users_make_invitations():
    staff = UserFactory(is_staff=True)
    client = _csrf_client()
    client.force_login(staff)
    assert client.get("/admin/ops/people/").status_code == 403
    assert 'href="/admin/ops/people/"' not in client.get("/admin/").content.decode()
    staff.user_permissions.add(Permission.objects.get(codename="add_user"))
    assert client.get("/admin/ops/people/").status_code == 200
    assert 'href="/admin/ops/people/">People</a>' in client.get("/admin/").content.decode()


def test_invitation_lifetimes_out_of_range_are_refused(operator):
    page = _post_form(operator, "/admin/ops/people/", {"action": "invite", "days": "365"})
    assert page.status_code == 200 and not Invitation.objects.exists()
    assert "from 1 to 30 days" in page.content.decode()


def test_two_people_racing_with_one_link_make_one_account(operator):
    key = _invite(operator).rstrip("/").rsplit("/", 1)[1]
    services.invitation_accept(key=key, username="first", password=GOOD_PASSWORD)
    with pytest.raises(services.InvitationUnusable):
        services.invitation_accept(key=key, username="second", password=GOOD_PASSWORD)
    assert not User.objects.filter(username="second").exists()


# --- sign-up with approval -------------------------------------------------------------------------


def _ask(username: str, *, note: str = "", password: str = GOOD_PASSWORD):
    data = {"username": username, "password1": password, "password2": password, "note": note}
    return _post_form(_csrf_client(), "/accounts/sign-up/", data)


def _signs_in(username: str) -> bool:
    return (
        _post_form(_csrf_client(), "/accounts/login/", {"username": username, "password": GOOD_PASSWORD}).status_code
        == 302
    )


def test_sign_up_is_closed_by_default(settings):
    assert settings.SIGN_UP_MODE == "closed"
    assert _csrf_client().get("/accounts/sign-up/").status_code == 404
    assert "Ask for one" not in _csrf_client().get("/accounts/login/").content.decode()


def test_a_requested_account_signs_in_only_once_approved(settings, operator):
    settings.SIGN_UP_MODE = "approval"
    assert "Ask for one" in _csrf_client().get("/accounts/login/").content.decode()
    sent = _ask("nico", note="Nico from the climbing club")
    assert sent.status_code == 200 and "Request sent" in sent.content.decode()
    assert not User.objects.filter(username="nico").exists() and not _signs_in("nico")

    request = AccountRequest.objects.get(username="nico")
    assert "Nico from the climbing club" in operator.get("/admin/ops/people/").content.decode()
    _post_form(operator, "/admin/ops/people/", {"action": "approve", "id": str(request.pk)})
    nico = User.objects.get(username="nico")
    assert not nico.is_staff and _signs_in("nico")
    assert AccountRequest.objects.get(pk=request.pk).password == ""  # kept by the account alone
    # Deciding twice changes nothing.
    _post_form(operator, "/admin/ops/people/", {"action": "refuse", "id": str(request.pk)})
    assert AccountRequest.objects.get(pk=request.pk).status == "approved"


def test_a_refused_request_never_signs_in_and_keeps_no_password(settings, operator):
    settings.SIGN_UP_MODE = "approval"
    _ask("spammer")
    request = AccountRequest.objects.get(username="spammer")
    _post_form(operator, "/admin/ops/people/", {"action": "refuse", "id": str(request.pk)})
    request.refresh_from_db()
    assert request.status == "refused" and request.password == ""
    assert not _signs_in("spammer") and not User.objects.filter(username="spammer").exists()


def test_a_taken_name_is_answered_like_a_free_one(settings):
    settings.SIGN_UP_MODE = "approval"
    UserFactory(username="dana")
    free, taken = _ask("newcomer"), _ask("dana")
    assert free.status_code == taken.status_code == 200
    # The same page, but for the CSRF token each response carries.
    same = [re.sub(r'name="csrf-token" content="[^"]+"', "", answer.content.decode()) for answer in (free, taken)]
    assert same[0] == same[1]
    assert not AccountRequest.objects.filter(username="dana").exists()


def test_a_sign_up_password_is_checked_by_the_validators(settings):
    settings.SIGN_UP_MODE = "approval"
    answer = _ask("nico", password="nicolas1")
    assert answer.status_code == 400 and not AccountRequest.objects.exists()
    assert "too similar" in answer.content.decode() or "too common" in answer.content.decode()


def test_sign_up_is_throttled_per_address(settings):
    settings.SIGN_UP_MODE = "approval"
    settings.JOIN_THROTTLE_RATE = "2/hour"
    answers = [_ask(f"person{n}").status_code for n in range(3)]
    assert answers == [200, 200, 429]
    assert AccountRequest.objects.count() == 2
