"""``python -m config.webcheck``: the process manager's health check asks for a restart only when one
would help: a web server that does not answer, or says it cannot get a database connection."""

from __future__ import annotations

import json
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from config import webcheck
from config.webcheck import web_trouble
from tests.helpers import ROOT, clean_env, free_port


class _Answers(BaseHTTPRequestHandler):
    def do_GET(self):
        payload = json.dumps(self.server.answer[1]).encode()
        self.send_response(self.server.answer[0])
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture
def answering():
    """A server answering the health check as a web server in some state would (set ``.answer``)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Answers)
    server.answer = (200, {})
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _url(server) -> str:
    return f"http://127.0.0.1:{server.server_address[1]}/api/health"


@pytest.mark.django_db(transaction=True)
def test_a_healthy_site_needs_no_restart(live_server):
    assert web_trouble(f"{live_server.url}/api/health") is None


def test_a_server_that_does_not_answer_needs_a_restart():
    assert "went unanswered" in web_trouble(f"http://127.0.0.1:{free_port()}/api/health")


def test_a_server_that_cannot_get_a_connection_needs_a_restart(answering):
    answering.answer = (503, {"database": {"ok": True}, "connections": {"ok": False}, "status": "degraded"})
    assert "cannot get a database connection" in web_trouble(_url(answering))


def test_a_database_or_redis_that_is_down_is_no_reason_to_restart_the_web_server(answering):
    answering.answer = (503, {"database": {"ok": False}, "connections": {"ok": True}, "redis": {"ok": False}})
    assert web_trouble(_url(answering)) is None


def test_the_command_exits_1_saying_why_and_0_when_all_is_well(answering):
    def run() -> subprocess.CompletedProcess:
        argv = [sys.executable, "-m", "config.webcheck", _url(answering)]
        return subprocess.run(argv, cwd=ROOT, env=clean_env(), capture_output=True, text=True, timeout=30)

    answering.answer = (503, {"connections": {"ok": False}})
    failed = run()
    assert failed.returncode == 1 and "cannot get a database connection" in failed.stderr
    answering.answer = (200, {"connections": {"ok": True}})
    assert run().returncode == 0


@pytest.mark.django_db(transaction=True)
def test_a_site_with_production_settings_is_asked_as_its_proxy_would_ask_it(live_server, settings):
    """Production settings redirect plain HTTP to HTTPS and admit only the site's name: asked directly on
    the loopback address, the server would answer a redirect or a 400, which says nothing of its state.
    Asked by the site's name and as its TLS proxy forwards, it answers with the health check itself."""
    settings.SECURE_SSL_REDIRECT = True
    settings.SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
    settings.ALLOWED_HOSTS = ["recollect.example.com"]
    url = f"{live_server.url}/api/health"

    answer = json.loads(webcheck._ask(url, unix_socket=None, timeout=5, host="recollect.example.com"))

    assert answer["status"] == "ok" and answer["connections"] == {"ok": True}
    unnamed = webcheck._ask(url, unix_socket=None, timeout=5, host=None)
    assert b"connections" not in unnamed, "by its loopback address alone the site is not asked at all"
