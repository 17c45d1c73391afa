"""Who am I: a key or a browser session tells its holder their id, the one in their own URIs."""

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.factories import UserFactory, index_document
from tests.samples import KETTLE

pytestmark = pytest.mark.django_db


def test_a_key_tells_its_holder_their_id_as_their_uris_spell_it(auth_client, user):
    me = auth_client.get("/api/me").json()
    assert me == {"id": user.pk, "username": user.username, "is_staff": False}
    document = index_document(user, "kettle.md", KETTLE)
    listed = auth_client.get("/api/documents").json()
    assert any(item["uri"].startswith(f"viking://resources/users/{me['id']}/") for item in listed["results"])
    assert str(document.id) in str(listed)


def test_another_persons_key_tells_them_their_own_id():
    other = UserFactory()
    client = APIClient()
    client.force_authenticate(other)
    assert client.get("/api/me").json()["id"] == other.pk


def test_no_one_is_signed_in_without_a_key(api_client):
    response = api_client.get("/api/me")
    assert response.status_code == 401 and response.json()["error"]["code"] == "not_authenticated"


def test_the_account_page_says_the_id_and_where_the_documents_are(client, user):
    client.force_login(user)
    page = client.get("/account/").content.decode()
    assert f"Your id is <strong>{user.pk}</strong>" in page
    assert f"viking://resources/users/{user.pk}" in page


def test_a_key_is_taken_as_a_bearer_token_too(user):
    client = APIClient()
    key = Token.objects.create(user=user).key
    client.credentials(HTTP_AUTHORIZATION=f"Bearer {key}")
    assert client.get("/api/me").json()["id"] == user.pk
    client.credentials(HTTP_AUTHORIZATION="Bearer not-a-key")
    assert client.get("/api/me").status_code == 401
