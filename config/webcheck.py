"""Whether a running web server needs a restart: ``python -m config.webcheck [URL]``.

For a process manager's health check (systemd, Docker Compose, Kubernetes' liveness probe) and for the
run command. Exits 1, saying why, when the server does not answer its health check, or answers that it
cannot get a database connection (connections it lost, or every one held
past DATABASE_CONNECTION_MAX_HOLD_S): only a restart mends those. Exits 0 otherwise, a database or a
Redis that is down included, since restarting the web server would not bring them back.
Needs no settings and no database: it only asks the server.
"""

from __future__ import annotations

import json
import sys
import urllib.error
import urllib.request

DEFAULT_URL = "http://127.0.0.1:8000/api/health"
ANSWER_TIMEOUT_S = 3.0


def web_trouble(url: str, *, timeout: float = ANSWER_TIMEOUT_S) -> str | None:
    """What is wrong with the server that only a restart can mend, or None."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:  # noqa: S310 (an operator's own URL)
            body = response.read()
    except urllib.error.HTTPError as error:  # a 503 still says what is wrong
        body = error.read()
    except (urllib.error.URLError, OSError) as error:
        return f"its health check went unanswered ({error})"
    try:
        connections = json.loads(body).get("connections", {})
    except (ValueError, AttributeError):
        return None  # an answer, if an odd one: the process serves requests
    if connections.get("ok") is False:
        return "it cannot get a database connection (every one is taken, one for too long)"
    return None


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    trouble = web_trouble(args[0] if args else DEFAULT_URL)
    if trouble:
        print(f"unhealthy: {trouble}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
