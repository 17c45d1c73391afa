"""Fairness of embedding: how long another person's new turn waits for its vector while one person
imports a long history.

    .venv/bin/python bench/embedding_fairness.py [--turns 10000] [--chunk 500] [--web-processes 2]

It runs the run command's stack (``python -m config.stack``: web processes, an interactive and a bulk
worker) on a database of its own (``recollect_bench_fairness_embed``). One person posts ``--turns`` turns
to a session in requests of ``--chunk`` messages, as an integration importing a history does; meanwhile
another person writes one message every half second to their own session and waits until it has a
vector. Reported: that wait (from the write's answer to the vector being stored) as p50/p95/max, and how
fast the import's turns were embedded.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._setup import django_for_bench, percentiles, stack_env, stack_start, stack_stop

DATABASE = "recollect_bench_fairness_embed"
PORT = 8766


def _call(base: str, token: str, path: str, body: dict | None = None) -> dict:
    data = json.dumps(body).encode() if body is not None else None
    headers = {"Authorization": f"Token {token}", "Content-Type": "application/json"}
    request = urllib.request.Request(f"{base}{path}", data=data, headers=headers)  # noqa: S310 (loopback)
    with urllib.request.urlopen(request, timeout=120) as response:  # noqa: S310
        return json.loads(response.read())


def _importer(base: str, token: str, session_id: str, turns: int, chunk: int, done: dict) -> None:
    started = time.perf_counter()
    for start in range(0, turns, chunk):
        messages = [
            {
                "role": "user" if n % 2 == 0 else "assistant",
                "content": f"Imported turn {n}: notes on the quarterly review of the warehouse, item {n % 97}.",
            }
            for n in range(start, min(turns, start + chunk))
        ]
        _call(base, token, f"/api/sessions/{session_id}/messages", {"messages": messages})
    done["posted_s"] = time.perf_counter() - started


def _embedded_count(session_id: str) -> int:
    from sessions_app.models import Message

    return Message.objects.filter(session_id=session_id, embedding__isnull=False).count()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10_000)
    parser.add_argument("--chunk", type=int, default=500)
    parser.add_argument("--web-processes", default="2")
    parser.add_argument("--every", type=float, default=0.5, help="seconds between the other person's turns")
    args = parser.parse_args()

    django_for_bench(DATABASE)
    from django.contrib.auth import get_user_model
    from rest_framework.authtoken.models import Token

    from sessions_app.models import Message

    users = get_user_model()
    importer, other = users.objects.create_user("importer"), users.objects.create_user("other")
    tokens = {user: Token.objects.create(user=user).key for user in (importer, other)}
    stack = stack_start(port=PORT, env=stack_env(), args=("--web-processes", args.web_processes))
    base = f"http://127.0.0.1:{PORT}"
    try:
        imported = _call(base, tokens[importer], "/api/sessions", {"title": "imported history"})["session_id"]
        mine = _call(base, tokens[other], "/api/sessions", {"title": "talking now"})["session_id"]
        done: dict = {}
        started = time.perf_counter()
        thread = threading.Thread(
            target=_importer, args=(base, tokens[importer], imported, args.turns, args.chunk, done), daemon=True
        )
        thread.start()
        waits = []
        number = 0
        while thread.is_alive() or _embedded_count(imported) < args.turns:
            number += 1
            written = _call(
                base,
                tokens[other],
                f"/api/sessions/{mine}/messages",
                {
                    "messages": [
                        {"role": "user", "content": f"Quick note {number}: the boiler makes a knocking noise again."}
                    ]
                },
            )
            message_id = written["ids"][0]
            sent = time.perf_counter()
            while not Message.objects.filter(pk=message_id, embedding__isnull=False).exists():
                time.sleep(0.02)
                if time.perf_counter() - sent > 300:
                    raise RuntimeError("the other person's turn was never embedded")
            waits.append((time.perf_counter() - sent) * 1000)
            time.sleep(args.every)
            if time.perf_counter() - started > 3600:
                break
        total = time.perf_counter() - started
        print(
            f"import: {args.turns} turns posted in {done.get('posted_s', 0):.0f} s, all embedded after {total:.0f} s "
            f"({args.turns / total:.1f} turns/s)"
        )
        print(f"the other person's turns: wait for a vector (ms) {percentiles(waits)}")
    finally:
        stack_stop(stack)


if __name__ == "__main__":
    main()
