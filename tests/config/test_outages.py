"""A database outage seen by a real Daphne process: requests get a 503 in the API's error shape within
the pool's timeout (never an HTML page or a hang), and service comes back by itself afterwards.

The outage is the database refusing every connection (``ALLOW_CONNECTIONS false`` and every existing
connection cut), which is what the application sees when PostgreSQL is stopped, without stopping the
server the rest of the suite shares."""

from __future__ import annotations

import time

import httpx
import pytest
from django.db import connection
from rest_framework.authtoken.models import Token

from tests.factories import UserFactory
from tests.helpers import database_session, start_daphnes, stop_processes, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]


RECOVERY_S = 60  # how long service may take to resume once the database is back


def _refuse_connections(refuse: bool) -> None:
    name = connection.settings_dict["NAME"]
    # A database cannot close its own doors: this runs from the server's maintenance database.
    with database_session("postgres") as admin:
        admin.execute(f'ALTER DATABASE "{name}" ALLOW_CONNECTIONS {"false" if refuse else "true"}')
        if refuse:
            admin.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s", [name])


def test_while_the_database_is_down_the_api_answers_503_json_and_recovers_by_itself():
    user = UserFactory()
    key = Token.objects.create(user=user).key
    name = connection.settings_dict["NAME"]
    (port,), processes = start_daphnes(1, DATABASE_POOL_TIMEOUT_S="2")
    headers = {"Authorization": f"Token {key}"}
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", headers=headers, timeout=30) as client:
            assert client.get("/api/sessions").status_code == 200
            _refuse_connections(True)
            try:
                started = time.monotonic()
                answers = [
                    client.get("/api/sessions"),
                    client.post("/api/sessions", json={"title": "x"}),
                    client.get("/api/health"),  # even the token lookup needs the database
                ]
                elapsed = time.monotonic() - started
                for answer in answers:
                    assert answer.status_code == 503, answer.text[:300]
                    assert answer.json()["error"]["code"] == "unavailable"
                    assert answer.headers["retry-after"] == "5"
                assert elapsed < 10, "each request gives up within the pool's timeout"
            finally:
                _refuse_connections(False)
                # This test's own connections were cut with the others: start afresh.
                connection.close()
                connection.close_pool()
            wait_until(
                lambda: client.get("/api/sessions").status_code == 200,
                timeout=RECOVERY_S,
                what="service resuming without a restart",
                every=0.5,
            )
    finally:
        stop_processes(processes)
    # The outage ends with the test: the database the rest of the suite shares takes new connections.
    with database_session("postgres") as admin:
        assert admin.execute("SELECT datallowconn FROM pg_database WHERE datname = %s", [name]).fetchone() == (True,)
    assert type(user).objects.filter(pk=user.pk).exists(), "this process reads the database again"
