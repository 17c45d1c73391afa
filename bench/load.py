"""Load: many users at once against a running Recollect, over REST, server-sent events and the websocket,
then a check that nothing was lost, duplicated or shown to the wrong user.

    .venv/bin/python bench/load.py [--base-url http://127.0.0.1:8000] [--clients 100] [--duration 180]
                                   [--think-ms 500] [--sse-accept text/event-stream] [--mix chat_sse=0,...]
                                   [--json out.json] [--quick]

Each client is a user of its own (``load-<run>-<n>``, created with a token through the ORM before the run,
so the script must see the same database as the server: run it from the same checkout, or with the same
``DATABASE_URL``). A client owns two sessions, ``notes`` and ``chat``, and until ``--duration`` has passed
it picks one operation after another, waiting a random pause (mean ``--think-ms``) in between, with these
weights (``--mix`` changes them):

    append    POST /api/sessions/{notes}/messages, 1 to 4 messages         (weight 30)
    recall    POST /api/memory/recall about something the client wrote     (20)
    find      POST /api/retrieval/find                                     (8)
    search    POST /api/retrieval/search with the notes session            (7)
    chat      POST /api/ai/chat in the chat session                        (10)
    chat_sse  POST /api/ai/chat/stream: context, token..., mood, done      (10)
    chat_ws   one chat over the client's websocket /ws/chat/ (kept open)  (15)

Latency is from sending the request to the last byte (the ``done`` event for streams); ``*_first_token``
rows are the time to the first ``token`` event. Any non-2xx answer, timeout, broken stream or out-of-order
event is an error, counted by kind. Then, over the API:

- exactly once: every message whose append was acknowledged (201 with ids) is in its session once, with
  the ids, role and content sent; every chat turn that reached ``done`` left its question once,
  followed by the answer the client received; nothing is stored that no client sent;
- isolation: every text a client received is scanned for the markers (``[ref <run>-<client>-<n>]``)
  that each client puts in what it writes; another client's marker, or another user's session id or
  user id in a result, is a leak. Each user lists exactly their own two sessions, and reading or writing
  another user's session answers 404.

The script exits non-zero when there was an error or a check failed. The tables are indicative: the
clients share the machine with the server.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import html
import json
import math
import os
import random
import re
import secrets
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

OPERATIONS = {
    "append": 30,
    "recall": 20,
    "find": 8,
    "search": 7,
    "chat": 10,
    "chat_sse": 10,
    "chat_ws": 15,
}
COMPONENTS = [
    "billing service",
    "search cluster",
    "VPN gateway",
    "payroll export",
    "mobile app",
    "Kafka brokers",
    "load balancer",
    "backup job",
    "SSO login",
    "invoice renderer",
    "mail relay",
    "data warehouse",
]
HAPPENINGS = [
    "failed after the deploy",
    "slowed down at the evening peak",
    "was migrated to the new region",
    "ran out of disk",
    "was patched for the TLS issue",
    "timed out on large requests",
    "was rolled back",
    "got a new on-call owner",
]
DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
PEOPLE = ["Alice", "Bao", "Chen", "Dara", "Emil", "Farah", "Goran", "Hana", "Ines", "Jonas"]


VERIFIED = [
    "acknowledged",
    "stored once",
    "lost",
    "duplicated",
    "altered",
    "never sent",
    "unacknowledged, stored",
    "unacknowledged, not stored",
]
FAILED = ("lost", "duplicated", "altered", "never sent")


class OpError(Exception):
    """A failed operation: ``kind`` is what the error table counts, ``detail`` one example of it."""

    def __init__(self, kind: str, detail: str = "") -> None:
        super().__init__(f"{kind}: {detail}")
        self.kind = kind
        self.detail = detail


@dataclass
class Stats:
    latencies: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))
    errors: Counter = field(default_factory=Counter)
    error_samples: dict[str, str] = field(default_factory=dict)
    leaks: list[str] = field(default_factory=list)

    def error(self, op: str, exc: OpError) -> None:
        key = f"{op}: {exc.kind}"
        self.errors[key] += 1
        self.error_samples.setdefault(key, exc.detail[:300])


@dataclass
class User:
    number: int
    user_id: int
    username: str
    token: str


@dataclass
class Client:
    """One user's view of the run: what it sent, what was acknowledged, and its connections."""

    user: User
    run: str
    stats: Stats
    rng: random.Random
    base_url: str
    sse_accept: str
    timeout: float
    http: Any = None
    socket: Any = None
    notes_id: str = ""
    chat_id: str = ""
    serial: int = 0
    topics: list[str] = field(default_factory=list)
    # n -> (role, content, id or None when unacknowledged)
    appended: dict[int, tuple[str, str, int | None]] = field(default_factory=dict)
    # question -> the answer received (None when the turn did not reach done)
    turns: dict[str, str | None] = field(default_factory=dict)
    session_owner: dict[str, int] = field(default_factory=dict)

    # --- helpers ----------------------------------------------------------------------------------------

    def marker(self) -> tuple[int, str]:
        self.serial += 1
        return self.serial, f"[ref {self.run}-{self.user.number}-{self.serial}]"

    def scan(self, text: str, where: str) -> None:
        """Records a leak when ``text`` holds another client's marker."""
        for number in re.findall(rf"\[ref {self.run}-(\d+)-\d+\]", text):
            if int(number) != self.user.number:
                self.stats.leaks.append(f"user {self.user.number} received client {number}'s text in {where}")

    def check_session(self, session_id: Any, where: str) -> None:
        owner = self.session_owner.get(str(session_id))
        if owner is not None and owner != self.user.number:
            self.stats.leaks.append(f"user {self.user.number} received user {owner}'s session in {where}")

    def check_uri(self, uri: str, where: str) -> None:
        for pattern in (r"viking://user/(\d+)/", r"viking://resources/users/(\d+)/"):
            match = re.match(pattern, uri or "")
            if match and int(match.group(1)) != self.user.user_id:
                self.stats.leaks.append(f"user {self.user.number} received {uri} in {where}")
        match = re.match(r"viking://session/([0-9a-f-]+)/", uri or "")
        if match:
            self.check_session(match.group(1), where)

    async def request(self, method: str, path: str, expect: tuple[int, ...] = (200, 201), **kwargs) -> Any:
        import httpx

        try:
            response = await self.http.request(method, path, **kwargs)
        except httpx.TimeoutException as exc:
            raise OpError("timeout", f"{method} {path}: {type(exc).__name__}") from exc
        except httpx.HTTPError as exc:
            raise OpError(type(exc).__name__, f"{method} {path}: {exc}") from exc
        if response.status_code not in expect:
            raise OpError(
                f"HTTP {response.status_code}{_error_code(response)}", f"{method} {path}: {_error_text(response)}"
            )
        self.scan(response.text, f"{method} {path}")
        if response.status_code == 204 or not response.content:
            return None
        try:
            return response.json()
        except ValueError as exc:
            raise OpError("not JSON", f"{method} {path}: {response.text[:200]}") from exc

    def topic(self) -> str:
        return self.rng.choice(self.topics) if self.topics else self.rng.choice(COMPONENTS)

    # --- operations ---------------------------------------------------------------------------------------

    async def start(self) -> None:
        for kind in ("notes", "chat"):
            body = await self.request("POST", "/api/sessions", json={"title": f"load {self.run} {kind}"})
            setattr(self, f"{kind}_id", str(body["session_id"]))

    async def append(self) -> None:
        batch, numbers = [], []
        for index in range(self.rng.randint(1, 4)):
            number, marker = self.marker()
            component = self.rng.choice(COMPONENTS)
            self.topics.append(component)
            if index % 2 == 0:
                role = "user"
                content = (
                    f"The {component} {self.rng.choice(HAPPENINGS)} on {self.rng.choice(DAYS)}; "
                    f"{self.rng.choice(PEOPLE)} tracks it in OPS-{self.rng.randint(100, 9999)}. {marker}"
                )
            else:
                role = "assistant"
                content = f"Noted: {self.rng.choice(PEOPLE)} follows up on the {component}. {marker}"
            batch.append({"role": role, "content": content, "metadata": {"load": [self.run, number]}})
            numbers.append(number)
            self.appended[number] = (role, content, None)
        body = await self.request("POST", f"/api/sessions/{self.notes_id}/messages", json={"messages": batch})
        ids = body.get("ids") if isinstance(body, dict) else None
        if not isinstance(ids, list) or len(ids) != len(batch):
            raise OpError("bad acknowledgement", f"sent {len(batch)} messages, got {body}")
        for number, message_id in zip(numbers, ids, strict=True):
            role, content, _ = self.appended[number]
            self.appended[number] = (role, content, message_id)

    async def recall(self) -> None:
        body = await self.request("POST", "/api/memory/recall", json={"query": f"What happened to the {self.topic()}?"})
        for message in body.get("messages", []):
            self.check_session(message.get("session_id"), "recall")

    async def find(self) -> None:
        body = await self.request("POST", "/api/retrieval/find", json={"query": f"{self.topic()} outage"})
        for hit in body.get("results", []):
            self.check_uri(hit.get("uri", ""), "find")

    async def search(self) -> None:
        query = {"query": f"who tracks the {self.topic()}?", "session_id": self.notes_id}
        body = await self.request("POST", "/api/retrieval/search", json=query)
        for hit in body.get("results", []):
            self.check_uri(hit.get("uri", ""), "search")

    def question(self) -> str:
        _, marker = self.marker()
        question = f"What do we know about the {self.topic()}? {marker}"
        self.turns[question] = None
        return question

    async def chat(self) -> None:
        question = self.question()
        body = await self.request("POST", "/api/ai/chat", json={"message": question, "session_id": self.chat_id})
        if str(body.get("session_id")) != self.chat_id:
            raise OpError("wrong session", f"asked in {self.chat_id}, answered in {body.get('session_id')}")
        self.turns[question] = body.get("message", "")

    async def chat_sse(self) -> float:
        import httpx

        question = self.question()
        body = {"message": question, "session_id": self.chat_id}
        events: list[tuple[str, dict]] = []
        started, first = time.perf_counter(), None
        try:
            async with self.http.stream(
                "POST", "/api/ai/chat/stream", json=body, headers={"Accept": self.sse_accept}
            ) as response:
                if response.status_code != 200:
                    await response.aread()
                    raise OpError(f"HTTP {response.status_code}{_error_code(response)}", _error_text(response))
                content_type = response.headers.get("content-type", "")
                if not content_type.startswith("text/event-stream"):
                    raise OpError("not an event stream", content_type)
                name, data = "message", []
                async for line in response.aiter_lines():
                    if line.startswith("event:"):
                        name = line[6:].strip()
                    elif line.startswith("data:"):
                        data.append(line[5:].strip())
                    elif not line and data:
                        text = "\n".join(data)
                        self.scan(text, "chat stream")
                        try:
                            events.append((name, json.loads(text)))
                        except ValueError as exc:
                            raise OpError("bad event", text[:200]) from exc
                        if name == "token" and first is None:
                            first = time.perf_counter() - started
                        name, data = "message", []
        except httpx.TimeoutException as exc:
            raise OpError("timeout", f"stream: {type(exc).__name__}") from exc
        except httpx.HTTPError as exc:
            raise OpError(type(exc).__name__, f"stream: {exc}") from exc
        self.turns[question] = self.check_events(events, "chat stream")
        return first

    async def chat_ws(self) -> float:
        import websockets

        question = self.question()
        events: list[tuple[str, dict]] = []
        started, first = time.perf_counter(), None
        try:
            if self.socket is None:
                await self.connect_socket()
            await self.socket.send(json.dumps({"type": "chat", "message": question, "session_id": self.chat_id}))
            while True:
                text = await asyncio.wait_for(self.socket.recv(), timeout=self.timeout)
                self.scan(text, "websocket")
                frame = json.loads(text)
                kind = frame.pop("type", None)
                if kind == "rejected":  # the answer in flight goes on: this socket is no use for the next
                    await self.drop_socket()
                    raise OpError("rejected frame", text[:300])
                events.append((kind, frame))
                if kind == "token" and first is None:
                    first = time.perf_counter() - started
                if kind in ("done", "error"):
                    break
        except TimeoutError as exc:
            await self.drop_socket()
            raise OpError("timeout", "no frame in time") from exc
        except (websockets.exceptions.WebSocketException, OSError) as exc:
            await self.drop_socket()
            raise OpError(type(exc).__name__, str(exc)) from exc
        self.turns[question] = self.check_events(events, "websocket")
        return first

    async def connect_socket(self) -> None:
        """Opens the client's socket, kept for its later chats; a failed handshake is its own kind of error."""
        import websockets

        url = self.base_url.replace("http", "ws", 1) + "/ws/chat/"
        try:
            self.socket = await websockets.connect(
                url,
                additional_headers={"Authorization": f"Token {self.user.token}"},
                open_timeout=self.timeout,
                max_size=2**24,
            )
        except websockets.exceptions.InvalidStatus as exc:
            raise OpError(f"handshake: HTTP {exc.response.status_code}", str(exc)) from exc
        except (websockets.exceptions.WebSocketException, OSError, TimeoutError) as exc:
            raise OpError(f"handshake: {type(exc).__name__}", str(exc)) from exc

    async def drop_socket(self) -> None:
        if self.socket is not None:
            with contextlib.suppress(Exception):
                await self.socket.close()
            self.socket = None

    def check_events(self, events: list[tuple[str, dict]], where: str) -> str:
        """The answer, once the events are known to be context, token..., mood, done, all in this session."""
        kinds = [kind for kind, _ in events]
        if kinds and kinds[-1] == "error":
            raise OpError("error event", json.dumps(events[-1][1])[:300])
        well_ordered = (
            len(kinds) >= 3
            and kinds[0] == "context"
            and kinds[-2:] == ["mood", "done"]
            and not set(kinds[1:-2]) - {"token"}
        )
        if not well_ordered:
            raise OpError("bad event order", " ".join(kinds[:8]) + (" ..." if len(kinds) > 8 else ""))
        for _, data in events:
            if str(data.get("session_id")) != self.chat_id:
                raise OpError("wrong session", f"{where}: {data.get('session_id')} instead of {self.chat_id}")
        answer = events[-1][1].get("message", "")
        streamed = "".join(data.get("token", "") for kind, data in events if kind == "token")
        if streamed != answer:
            raise OpError("tokens differ from done", f"{len(streamed)} streamed characters, done has {len(answer)}")
        return answer

    # --- verification ---------------------------------------------------------------------------------

    async def all_messages(self, session_id: str) -> list[dict]:
        """Every message of a session, oldest first: its detail holds the latest page, and each earlier
        page is reached by the cursor the one after it gives."""
        detail = await self.request("GET", f"/api/sessions/{session_id}")
        messages, cursor = detail["messages"], detail.get("messages_previous")
        while cursor:
            page = await self.request("GET", f"/api/sessions/{session_id}/messages?cursor={cursor}&limit=200")
            messages, cursor = page["results"] + messages, page.get("previous")
        return messages

    async def verify(self, neighbour: Client) -> Counter:
        """Reads back this user's sessions; counts, per kind of write, what was stored once, lost, doubled,
        altered or never sent. Keys are ``(kind, outcome)``."""
        found: Counter = Counter()

        def tally(kind: str, acknowledged: bool, copies: int) -> None:
            if acknowledged:
                found[kind, "acknowledged"] += 1
                found[kind, "stored once" if copies == 1 else "lost" if copies == 0 else "duplicated"] += 1
            else:
                found[kind, "unacknowledged, stored" if copies else "unacknowledged, not stored"] += 1
                found[kind, "duplicated"] += copies > 1

        seen: Counter = Counter()
        for message in await self.all_messages(self.notes_id):
            load = (message.get("metadata") or {}).get("load")
            if not (isinstance(load, list) and len(load) == 2 and load[0] == self.run and load[1] in self.appended):
                found["appends", "never sent"] += 1
                continue
            seen[load[1]] += 1
            role, content, message_id = self.appended[load[1]]
            if (message["role"], message["content"]) != (role, content) or (
                message_id is not None and message["id"] != message_id
            ):
                found["appends", "altered"] += 1
        for number, (_, _, message_id) in self.appended.items():
            tally("appends", message_id is not None, seen[number])

        messages = await self.all_messages(self.chat_id)
        asked: Counter = Counter(m["content"] for m in messages if m["role"] == "user")
        found["chat turns", "never sent"] += sum(1 for question in asked if question not in self.turns)
        for question, answer in self.turns.items():
            tally("chat turns", answer is not None, asked[question])
            if answer is None:
                continue
            position = next((i for i, m in enumerate(messages) if m["content"] == question), None)
            following = messages[position + 1] if position is not None and position + 1 < len(messages) else None
            if following is None or following["role"] != "assistant" or following["content"] != answer:
                found["chat turns", "altered"] += 1

        listed, page = set(), "/api/sessions"
        while page:
            body = await self.request("GET", page)
            rows = body["results"] if isinstance(body, dict) else body
            listed |= {str(row["session_id"]) for row in rows}
            page = body.get("next") if isinstance(body, dict) else None
        if listed != {self.notes_id, self.chat_id}:
            self.stats.leaks.append(f"user {self.user.number} lists {len(listed)} sessions instead of its 2")
        if neighbour is not self:
            for method, path, kwargs in (
                ("GET", f"/api/sessions/{neighbour.notes_id}", {}),
                (
                    "POST",
                    f"/api/sessions/{neighbour.notes_id}/messages",
                    {"json": {"messages": [{"role": "user", "content": f"probe {self.marker()[1]}"}]}},
                ),
                ("POST", "/api/ai/chat", {"json": {"message": "probe", "session_id": neighbour.chat_id}}),
            ):
                response = await self.http.request(method, path, **kwargs)
                found["isolation", "cross-user probes"] += 1
                if response.status_code != 404:
                    self.stats.leaks.append(
                        f"user {self.user.number}: {method} {path} of user {neighbour.user.number} "
                        f"answered {response.status_code}"
                    )
        return found


def _error_code(response) -> str:
    with contextlib.suppress(Exception):
        return f" {response.json()['error']['code']}"
    return ""


def _error_text(response) -> str:
    """The body, or for Django's debug page its title and exception text (the page itself is long)."""
    text = response.text
    if "html" not in response.headers.get("content-type", ""):
        return text
    parts = [re.search(r"<title>(.*?)</title>", text, re.S), re.search(r'exception_value">(.*?)<', text, re.S)]
    return " | ".join(" ".join(html.unescape(p.group(1)).split()) for p in parts if p) or text[:200]


def percentile(ordered: list[float], q: float) -> float:
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


# --- set-up --------------------------------------------------------------------------------------------


def create_users(run: str, count: int) -> tuple[list[User], dict[str, int]]:
    """``count`` users with tokens, straight in the database (no password hashing, no login throttle)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.dev")
    os.environ.setdefault("LOG_LEVEL", "WARNING")
    import django

    django.setup()
    from django.contrib.auth import get_user_model

    from accounts_app.tokens import api_token_create

    model = get_user_model()
    rows = [model(username=f"load-{run}-{number:03d}") for number in range(count)]
    for row in rows:
        row.set_unusable_password()
    model.objects.bulk_create(rows)
    created = list(model.objects.filter(username__startswith=f"load-{run}-").order_by("username"))
    keys = [api_token_create(user=user, name="load")[1] for user in created]
    users = [User(number, u.id, u.username, key) for number, (u, key) in enumerate(zip(created, keys, strict=True))]
    return users, data_size()


def data_size() -> dict[str, int]:
    from django.contrib.auth import get_user_model

    from sessions_app.models import ChatSession, Message

    return {
        "users": get_user_model().objects.count(),
        "sessions": ChatSession.objects.count(),
        "messages": Message.objects.count(),
    }


# --- the run -------------------------------------------------------------------------------------------


async def timed(client: Client, op: str) -> None:
    started = time.perf_counter()
    try:
        first = await getattr(client, op)()
    except OpError as exc:
        client.stats.error(op, exc)
        return
    except Exception as exc:  # a bug or an unforeseen protocol failure: counted, the run goes on
        client.stats.error(op, OpError(type(exc).__name__, repr(exc)))
        return
    client.stats.latencies[op].append((time.perf_counter() - started) * 1000)
    if first is not None:
        client.stats.latencies[f"{op}_first_token"].append(first * 1000)


async def client_loop(client: Client, deadline: float, think_s: float) -> None:
    names, weights = list(OPERATIONS), list(OPERATIONS.values())
    await asyncio.sleep(client.rng.uniform(0, 2 * think_s))  # spread the first requests
    while time.monotonic() < deadline:
        await timed(client, client.rng.choices(names, weights)[0])
        await asyncio.sleep(client.rng.uniform(0, 2 * think_s))


async def run(args: argparse.Namespace, users: list[User], run_id: str) -> dict[str, Any]:
    import httpx

    stats = Stats()
    clients = []
    for user in users:
        http = httpx.AsyncClient(
            base_url=args.base_url,
            headers={"Authorization": f"Token {user.token}"},
            timeout=httpx.Timeout(args.timeout, connect=30),
        )
        clients.append(
            Client(user, run_id, stats, random.Random(user.number), args.base_url, args.sse_accept, args.timeout, http)
        )
    try:
        began = time.perf_counter()
        await asyncio.gather(*(timed(client, "start") for client in clients))
        owners = {sid: c.user.number for c in clients for sid in (c.notes_id, c.chat_id) if sid}
        for client in clients:
            client.session_owner = owners
        ready = [c for c in clients if c.notes_id and c.chat_id]
        print(f"{len(ready)}/{len(clients)} clients have their sessions ({time.perf_counter() - began:.1f} s)")
        # Not measured: the first recall and chat load the embedding model in the server.
        await timed(ready[0], "recall")
        await timed(ready[0], "chat")
        stats.latencies.clear()
        began = time.perf_counter()
        deadline = time.monotonic() + args.duration
        await asyncio.gather(*(client_loop(client, deadline, args.think_ms / 1000) for client in ready))
        wall = time.perf_counter() - began
        print(f"load phase: {wall:.1f} s; verifying ...", flush=True)

        verified: Counter = Counter()
        gate = asyncio.Semaphore(10)

        async def verify(index: int) -> None:
            async with gate:
                try:
                    verified.update(await ready[index].verify(ready[(index + 1) % len(ready)]))
                except OpError as exc:
                    stats.error("verify", exc)
                except Exception as exc:  # this user stays unverified, which fails the run
                    stats.error("verify", OpError(type(exc).__name__, repr(exc)))

        await asyncio.gather(*(verify(index) for index in range(len(ready))))
    finally:
        for client in clients:
            await client.drop_socket()
            await client.http.aclose()
    return {"stats": stats, "wall_s": wall, "verified": verified}


def report(args, run_id: str, sizes: dict, outcome: dict) -> dict[str, Any]:
    stats, wall = outcome["stats"], outcome["wall_s"]
    table = {}
    for op in [*OPERATIONS, *(f"{op}_first_token" for op in ("chat_sse", "chat_ws"))]:
        samples = sorted(stats.latencies.get(op, []))
        errors = sum(count for key, count in stats.errors.items() if key.split(":")[0] == op)
        row = {"ok": len(samples), "errors": errors}
        if samples:
            row |= {f"p{q}_ms": round(percentile(samples, q / 100), 1) for q in (50, 95, 99)}
            row["max_ms"] = round(samples[-1], 1)
            row["per_s"] = round(len(samples) / wall, 2)
        table[op] = row
    total = sum(len(stats.latencies.get(op, [])) for op in OPERATIONS)
    print(
        f"\nrun {run_id}: {args.clients} clients, {wall:.0f} s, think {args.think_ms:.0f} ms, against {args.base_url}"
    )
    print("mix: " + ", ".join(f"{name} {weight}" for name, weight in OPERATIONS.items()))
    print(f"database at the start (with the new users): {sizes['before']}; at the end: {sizes['after']}\n")
    print(
        f"{'operation':<20}{'ok':>7}{'errors':>8}{'p50 ms':>10}{'p95 ms':>10}{'p99 ms':>10}{'max ms':>10}{'per s':>8}"
    )
    for op, row in table.items():
        numbers = "".join(f"{row.get(key, '-'):>10}" for key in ("p50_ms", "p95_ms", "p99_ms", "max_ms"))
        print(f"{op:<20}{row['ok']:>7}{row['errors']:>8}{numbers}{row.get('per_s', '-'):>8}")
    errors = sum(stats.errors.values())
    print(f"\nthroughput: {total / wall:.1f} operations/s ({total} operations), errors: {errors}")
    for key, count in stats.errors.most_common():
        print(f"  {count:6d}  {key}   e.g. {stats.error_samples[key][:200]}")
    verified = outcome["verified"]
    print("\nexactly once, read back through the API (chat turns: the question, then the answer received):")
    print(f"  {'':<30}{'appends':>10}{'chat turns':>12}")
    for key in VERIFIED:
        print(f"  {key:<30}{verified['appends', key]:>10}{verified['chat turns', key]:>12}")
    failures = sum(verified[kind, key] for kind in ("appends", "chat turns") for key in FAILED)
    print(f"isolation: {verified['isolation', 'cross-user probes']} cross-user probes, {len(stats.leaks)} leaks")
    for leak in stats.leaks[:20]:
        print(f"  {leak[:300]}")
    passed = errors == 0 and failures == 0 and not stats.leaks
    print(f"\n{'PASS' if passed else 'FAIL'}")
    return {
        "run": run_id,
        "base_url": args.base_url,
        "clients": args.clients,
        "duration_s": round(wall, 1),
        "think_ms": args.think_ms,
        "sse_accept": args.sse_accept,
        "mix": OPERATIONS,
        "data_size": sizes,
        "operations": table,
        "throughput_per_s": round(total / wall, 2),
        "errors": dict(stats.errors),
        "error_samples": stats.error_samples,
        "verification": {f"{kind}: {key}": count for (kind, key), count in verified.items()},
        "leaks": stats.leaks,
        "passed": passed,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", default=os.environ.get("RECOLLECT_URL", "http://127.0.0.1:8000"))
    parser.add_argument("--clients", type=int, default=100, help="concurrent users")
    parser.add_argument("--duration", type=float, default=180, help="seconds of load")
    parser.add_argument("--think-ms", type=float, default=500, help="mean pause between a client's operations")
    parser.add_argument("--timeout", type=float, default=120, help="seconds before a request counts as failed")
    parser.add_argument("--sse-accept", default="text/event-stream", help="Accept header of POST /api/ai/chat/stream")
    parser.add_argument(
        "--mix", default="", help="operation weights to change, e.g. chat_sse=0,recall=40 (the rest as above)"
    )
    parser.add_argument("--json", type=Path, help="also write the results here")
    parser.add_argument("--quick", action="store_true", help="10 clients for 20 s")
    args = parser.parse_args()
    if args.quick:
        args.clients, args.duration = 10, 20
    args.base_url = args.base_url.rstrip("/")
    for item in filter(None, args.mix.split(",")):
        name, _, weight = item.partition("=")
        if name not in OPERATIONS or not weight.isdigit():
            parser.error(f"--mix: {item!r} is not <operation>=<integer weight> with one of {', '.join(OPERATIONS)}")
        OPERATIONS[name] = int(weight)

    run_id = secrets.token_hex(3)
    users, before = create_users(run_id, args.clients)
    print(f"created {len(users)} users load-{run_id}-NNN; database: {before}", flush=True)
    outcome = asyncio.run(run(args, users, run_id))
    results = report(args, run_id, {"before": before, "after": data_size()}, outcome)
    if args.json:
        args.json.write_text(json.dumps(results, indent=2) + "\n")
    sys.exit(0 if results["passed"] else 1)


if __name__ == "__main__":
    main()
