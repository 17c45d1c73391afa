"""The session working set: kept in Redis so every server process sees it, evicted
SESSION_MEMORY_TTL_HOURS after the last access, and an expired one simply starts fresh."""

import subprocess
import sys
import textwrap
import uuid

import pytest
from django.core.cache import caches

from sessions_app import services
from tests.helpers import ROOT, clean_env, wait_until

MS_PER_HOUR = 3600 * 1000
KEY_MISSING = -2  # what PTTL answers for a key Redis no longer has


@pytest.fixture
def session_id():
    sid = str(uuid.uuid4())
    yield sid
    services.working_set_clear(session_id=sid)


def test_an_unknown_session_starts_with_an_empty_working_set(session_id):
    assert services.working_set_get(session_id=session_id).as_dict() == {
        "resolved_terms": {},
        "active_documents": [],
        "active_sections": [],
    }


def test_updates_merge_most_recent_first_and_stay_bounded(session_id):
    services.working_set_update(
        session_id=session_id,
        resolved_terms={"it": "the Determination Date"},
        documents=["doc-a"],
        sections=["viking://a/1"],
    )
    services.working_set_update(
        session_id=session_id,
        resolved_terms={"the fee": "the servicing fee"},
        documents=["doc-b", "doc-a"],
        sections=[f"viking://b/{i}" for i in range(30)],
    )
    state = services.working_set_get(session_id=session_id)
    assert state.resolved_terms == {"it": "the Determination Date", "the fee": "the servicing fee"}
    assert state.active_documents == ["doc-b", "doc-a"]
    assert len(state.active_sections) == services.MAX_SECTIONS and state.active_sections[0] == "viking://b/0"


def test_another_server_process_sees_the_same_working_set(session_id):
    services.working_set_update(session_id=session_id, resolved_terms={"it": "the quarterly report"})
    script = textwrap.dedent(f"""
        import django; django.setup()
        from sessions_app.services import working_set_get
        print(working_set_get(session_id="{session_id}").resolved_terms["it"])
    """)
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        env=clean_env(DJANGO_SETTINGS_MODULE="config.settings.test"),
    )
    assert result.stdout.strip().splitlines()[-1] == "the quarterly report", result.stderr


def _redis_key(session_id: str) -> tuple[object, str]:
    """The Redis client and the stored key of a session's working set: the TTL is Redis's own clock."""
    key = caches["default"].make_key(f"working-set:{session_id}")
    return caches["default"]._cache.get_client(key, write=True), key


def _remaining_hours(session_id: str) -> float:
    client, key = _redis_key(session_id)
    return client.pttl(key) / MS_PER_HOUR


def test_it_expires_after_the_ttl_and_restarts_fresh(session_id, settings):
    settings.SESSION_MEMORY_TTL_HOURS = 6
    services.working_set_update(session_id=session_id, documents=["doc-a"])
    assert services.working_set_get(session_id=session_id).active_documents == ["doc-a"]
    assert 5.99 < _remaining_hours(session_id) <= 6
    client, key = _redis_key(session_id)
    client.pexpire(key, 1)  # the last millisecond of its six hours
    _wait_for_redis_to_drop(client, key)
    assert services.working_set_get(session_id=session_id).active_documents == []
    services.working_set_update(session_id=session_id, documents=["doc-b"])
    assert services.working_set_get(session_id=session_id).active_documents == ["doc-b"]


def _wait_for_redis_to_drop(client, key: str) -> None:
    """Redis removes a key whose time is up on its next access; this asks until it has (a millisecond)."""
    wait_until(lambda: client.pttl(key) == KEY_MISSING, timeout=2, what="the key to expire")


def test_each_access_extends_its_life(session_id, settings):
    settings.SESSION_MEMORY_TTL_HOURS = 2
    services.working_set_update(session_id=session_id, documents=["doc-a"])
    client, key = _redis_key(session_id)
    for _ in range(3):
        client.pexpire(key, 1000)  # all but its last second of life has passed
        assert services.working_set_get(session_id=session_id).active_documents == ["doc-a"]
        assert 1.99 < _remaining_hours(session_id) <= 2, "reading it gave it its whole life again"


def test_with_session_memory_off_nothing_is_kept_and_nothing_fails(session_id, settings):
    settings.ENABLE_SESSION_MEMORY = False
    services.working_set_update(session_id=session_id, documents=["doc-a"])
    assert services.working_set_get(session_id=session_id).active_documents == []
    settings.ENABLE_SESSION_MEMORY = True
    assert services.working_set_get(session_id=session_id).active_documents == []


@pytest.mark.django_db
def test_the_api_shows_the_working_set(auth_client, user):
    from tests.factories import ChatSessionFactory

    session = ChatSessionFactory(owner=user)
    services.working_set_update(session_id=str(session.id), documents=["doc-a"])
    body = auth_client.get(f"/api/sessions/{session.id}/working-set").json()
    assert body["active_documents"] == ["doc-a"]
    services.working_set_clear(session_id=str(session.id))


def test_a_redis_outage_degrades_to_an_empty_working_set(session_id, settings):
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": "redis://127.0.0.1:1/0"}
    }
    state = services.working_set_update(session_id=session_id, documents=["doc-a"])
    assert state.active_documents == ["doc-a"]  # this turn still sees what it just did
    assert services.working_set_get(session_id=session_id).active_documents == []
    services.working_set_clear(session_id=session_id)


@pytest.mark.django_db
def test_integrations_can_merge_into_the_working_set(auth_client, user):
    from tests.factories import ChatSessionFactory

    session = ChatSessionFactory(owner=user)
    url = f"/api/sessions/{session.id}/working-set"
    body = auth_client.post(
        url, {"resolved_terms": {"it": "the PSA"}, "active_documents": ["doc-1"]}, format="json"
    ).json()
    assert body["resolved_terms"] == {"it": "the PSA"} and body["active_documents"] == ["doc-1"]
    assert auth_client.post(url, {"active_documents": "not a list"}, format="json").status_code == 400
    services.working_set_clear(session_id=str(session.id))


@pytest.mark.django_db
def test_deleting_a_session_forgets_its_working_set(auth_client):
    session = auth_client.post("/api/sessions", {"title": "kettle"}, format="json").json()["session_id"]
    services.working_set_update(session_id=session, resolved_terms={"it": "the kettle"})
    assert auth_client.delete(f"/api/sessions/{session}").status_code == 204
    assert services.working_set_get(session_id=session).resolved_terms == {}
