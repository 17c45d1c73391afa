"""Whether a running web server needs a restart: ``python -m config.webcheck [URL]``.

For a process manager's health check (systemd, Docker Compose, Kubernetes' liveness probe) and for the
run command (``--unix-socket PATH`` asks the one web process listening there; ``--host NAME`` asks by the
site's name, for production settings, whose ALLOWED_HOSTS a loopback address is not in). Exits 1, saying why, when
the server does not answer its health check, or answers that it cannot get a database connection
(connections it lost, or every one held past DATABASE_CONNECTION_MAX_HOLD_S): only a restart mends
those. Exits 0 otherwise, a database or a Redis that is down included, since restarting the web server
would not bring them back.
Needs no settings and no database: it only asks the server.
"""

from __future__ import annotations

import argparse
import http.client
import json
import socket
import sys
import urllib.error
import urllib.parse
import urllib.request

DEFAULT_URL = "http://127.0.0.1:8000/api/health"
ANSWER_TIMEOUT_S = 3.0


class _UnixConnection(http.client.HTTPConnection):
    """HTTP over a Unix socket: each of the run command's web processes also listens on one of its own, so
    that each is asked, not whichever takes the shared port's next connection."""

    def __init__(self, path: str, *, timeout: float) -> None:
        super().__init__("localhost", timeout=timeout)
        self.path = path

    def connect(self) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(self.timeout)
        self.sock.connect(self.path)


def _headers(host: str | None) -> dict[str, str]:
    # Asked directly rather than through the TLS proxy in front, the server is told the request came over
    # HTTPS as the proxy would tell it, so that production settings answer rather than redirect; and by
    # the site's own name (``host``), which ALLOWED_HOSTS admits where a loopback address may not be.
    return {"X-Forwarded-Proto": "https", **({"Host": host} if host else {})}


def _ask(url: str, *, unix_socket: str | None, timeout: float, host: str | None) -> bytes:
    if unix_socket is None:
        request = urllib.request.Request(url, headers=_headers(host))  # noqa: S310 (an operator's own URL)
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:  # noqa: S310
                return response.read()
        except urllib.error.HTTPError as error:  # a 503 still says what is wrong
            return error.read()
    connection = _UnixConnection(unix_socket, timeout=timeout)
    try:
        target = urllib.parse.urlsplit(url)
        path = target.path + (f"?{target.query}" if target.query else "")
        connection.request("GET", path, headers=_headers(host))
        return connection.getresponse().read()
    finally:
        connection.close()


def web_trouble(
    url: str, *, timeout: float = ANSWER_TIMEOUT_S, unix_socket: str | None = None, host: str | None = None
) -> str | None:
    """What is wrong with the server that only a restart can mend, or None. With ``unix_socket``, the
    server listening there is asked (``url`` gives the path); ``host`` is the name it is asked by."""
    try:
        body = _ask(url, unix_socket=unix_socket, timeout=timeout, host=host)
    except (urllib.error.URLError, OSError, http.client.HTTPException) as error:
        return f"its health check went unanswered ({error})"
    try:
        connections = json.loads(body).get("connections", {})
    except (ValueError, AttributeError):
        return None  # an answer, if an odd one: the process serves requests
    if connections.get("ok") is False:
        return "it cannot get a database connection (every one is taken, one for too long)"
    return None


def web_ready(url: str, *, timeout: float = ANSWER_TIMEOUT_S, unix_socket: str | None = None) -> bool:
    """Whether the server (the one listening on ``unix_socket``, when given) says all is well: its database,
    Redis and connections, and that it has warmed up since it started."""
    try:
        return json.loads(_ask(url, unix_socket=unix_socket, timeout=timeout, host=None)).get("status") == "ok"
    except (urllib.error.URLError, OSError, http.client.HTTPException, ValueError, AttributeError):
        return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m config.webcheck", description=__doc__.splitlines()[0])
    parser.add_argument("url", nargs="?", default=DEFAULT_URL)
    parser.add_argument("--unix-socket", help="ask the server listening on this Unix socket")
    parser.add_argument("--host", help="the site's name (one of ALLOWED_HOSTS), when the URL's is not")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    trouble = web_trouble(args.url, unix_socket=args.unix_socket, host=args.host)
    if trouble:
        print(f"unhealthy: {trouble}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
