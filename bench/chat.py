"""Chat benchmarks: the time a turn spends outside the model, prompt size over a long session, and how
a burst of simultaneous websocket chats is served by the run command's stack (web processes sharing one
port, and its workers) with 1, 2 and 4 web processes, the model a stub that streams.

    .venv/bin/python bench/chat.py [--messages 100000] [--chunks 10000] [--turns 60]
                                   [--sockets 10,25,50,100] [--web-processes 1,2,4] [--skip-load]

Rows are loaded as in ``bench/retrieval_latency.py`` (real embeddings reused with noise). The stub
model is the loopback OpenAI-compatible server the tests use, streaming one word every
``--token-ms`` milliseconds; the added per-token latency is the gap between tokens a client sees
minus that.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._setup import django_for_bench, percentiles, stack_env, stack_start, stack_stop

DATABASE = "recollect_bench_chat"


def outside_model(owner, turns: int) -> dict:
    """Per turn: everything before the first token plus everything after the last one, in a process warmed
    up as a web process is when it starts."""
    from chat_app.services import ChatRequest, chat_turn
    from foundation.warmup import warm_up

    warm_up()

    questions = [
        "What happened to the billing service last week?",
        "why did it fail?",
        "Which ticket tracks the timezone bug?",
        "and who fixed that?",
        "Summarise the incidents with the load balancer.",
    ]
    session_id = None
    samples = []
    for number in range(turns):
        started = time.perf_counter()
        first_token = last_token = None
        for event in chat_turn(owner=owner, request=ChatRequest(message=questions[number % 5], session_id=session_id)):
            now = time.perf_counter()
            if event.type == "context":
                session_id = event.data["session_id"]
                first_token = now
            elif event.type == "token":
                last_token = now
        ended = time.perf_counter()
        samples.append((first_token - started) + (ended - (last_token or first_token)))
    return percentiles([s * 1000 for s in samples])


def prompt_growth(owner) -> dict:
    """Prompt tokens of a turn at turns 10, 100 and 1,000 of one session."""
    from chat_app.services import ChatRequest, chat_turn
    from sessions_app import services

    session = services.session_create(owner=owner, title="long session")
    rng = random.Random(3)
    topics = ["billing", "search latency", "the VPN", "holiday rota", "the Kafka upgrade", "invoices"]
    done_turns, sizes = 0, {}
    for target in (10, 100, 1000):
        batch = []
        while done_turns + len(batch) // 2 < target - 1:
            topic = rng.choice(topics)
            batch += [
                services.NewMessage(role="user", content=f"Question {len(batch)} about {topic}: what changed?"),
                services.NewMessage(role="assistant", content=f"For {topic}, ticket OPS-{rng.randint(100, 999)}."),
            ]
        for start in range(0, len(batch), 500):
            services.message_bulk_create(session=session, messages=batch[start : start + 500])
        done_turns += len(batch) // 2
        events = list(
            chat_turn(owner=owner, request=ChatRequest(message="What did we decide?", session_id=str(session.id)))
        )
        sizes[target] = events[-1].data.get("prompt_tokens")
        done_turns += 1
    return sizes


async def _socket_chat(url: str, message: str) -> dict:
    """One chat over a websocket: when its first token came, and how fast the rest streamed. Tokens that
    arrive together may share a frame, so the rate is words over time, not frames."""
    import websockets

    error, first, last, words, stall = None, None, None, 0, 0.0
    started = time.perf_counter()
    try:
        async with websockets.connect(url, open_timeout=60, max_queue=None) as ws:
            await ws.send(json.dumps({"type": "chat", "message": message}))
            while True:
                frame = json.loads(await asyncio.wait_for(ws.recv(), timeout=300))
                now = time.perf_counter()
                if frame["type"] == "token":
                    if last is not None:
                        stall = max(stall, now - last)
                    first = first if first is not None else now
                    last = now
                    words += len(frame["token"].split())
                elif frame["type"] in ("done", "error"):
                    error = frame.get("error") if frame["type"] == "error" else None
                    break
    except Exception as exc:  # counted, not fatal: the point is how many fail
        error = f"{type(exc).__name__}: {exc}"
    per_token = (last - first) * 1000 / (words - 1) if first is not None and words > 1 else None
    return {
        "error": error,
        "first_token_s": None if first is None else first - started,
        "per_token_ms": per_token,
        "stall_ms": stall * 1000,
        "words": words,
    }


def _burst(url: str, count: int, token_ms: float) -> dict:
    """``count`` chats at once over websockets: first-token and streaming figures, errors."""

    async def run():
        return await asyncio.gather(*[_socket_chat(url, f"Chat {i}: what is new?") for i in range(count)])

    began = time.perf_counter()
    outcomes = asyncio.run(run())
    wall = time.perf_counter() - began
    errors = [o["error"] for o in outcomes if o["error"]]
    rates = sorted(o["per_token_ms"] - token_ms for o in outcomes if o["per_token_ms"] is not None)
    firsts = sorted(o["first_token_s"] for o in outcomes if o["first_token_s"] is not None)
    stalls = sorted(o["stall_ms"] for o in outcomes)

    def pct(values, q):
        return round(values[max(0, int(len(values) * q) - 1)], 2) if values else None

    return {
        "errors": len(errors),
        "first_error": errors[0] if errors else None,
        "words": sum(o["words"] for o in outcomes),
        "added_ms_per_token_p50": pct(rates, 0.5),
        "added_ms_per_token_p95": pct(rates, 0.95),
        "longest_stall_ms_p95": pct(stalls, 0.95),
        "first_token_s_p50": pct(firsts, 0.5),
        "first_token_s_p95": pct(firsts, 0.95),
        "turns_per_s": round(count / wall, 2),
        "wall_s": round(wall, 1),
    }


def _settled(owner, *, patience_s: float = 180.0) -> None:
    """Waits until the workers have embedded every turn said so far (those of an earlier burst, whose jobs
    a stopped stack left behind), so that each burst is measured against the same quiet stack rather than
    beside the previous one's catching up."""
    from sessions_app.models import Message

    began = time.perf_counter()
    waiting = Message.objects.said().filter(owner=owner, embedding__isnull=True)
    while waiting.exists() and time.perf_counter() - began < patience_s:
        time.sleep(1)
    took, left = time.perf_counter() - began, waiting.count()
    print(f"  (the workers caught up in {took:.0f} s; {left} turns still unembedded)", flush=True)


def concurrency(owner, levels: list[int], token_ms: float, words: int, processes: list[int]) -> dict:
    """Bursts of simultaneous websocket chats against the run command's stack with 1, 2, 4 ... web
    processes, the stub model streaming ``words`` words one every ``token_ms``."""
    from rest_framework.authtoken.models import Token

    # The stub model runs in a process of its own, as a real one would, so that it does not share this
    # process's interpreter with the clients being measured.
    model = subprocess.Popen(
        [sys.executable, "-m", "tests.llm_server", "--words", str(words), "--token-ms", str(token_ms)],
        stdout=subprocess.PIPE,
        text=True,
    )
    model_url = model.stdout.readline().strip()
    token = Token.objects.get_or_create(user=owner)[0].key
    port = 8765
    env = stack_env(LLM_MODEL="openai/stub", LLM_API_BASE=model_url, LLM_API_KEY="stub")
    results: dict = {}
    try:
        for count in processes:
            stack = stack_start(port=port, env=env, args=("--web-processes", str(count)))
            try:
                url = f"ws://127.0.0.1:{port}/ws/chat/?token={token}"
                for _ in range(2 * count):  # not measured: every process loads its models
                    asyncio.run(_socket_chat(url, "Warm up: load the models."))
                for level in levels:
                    _settled(owner)
                    results[(count, level)] = _burst(url, level, token_ms)
                    print(f"  {count} web process(es), {level:4d} sockets: {results[(count, level)]}", flush=True)
            finally:
                stack_stop(stack)
        return results
    finally:
        model.terminate()
        model.wait(timeout=10)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--messages", type=int, default=100_000)
    parser.add_argument("--chunks", type=int, default=10_000)
    parser.add_argument("--turns", type=int, default=60)
    parser.add_argument("--sockets", default="10,25,50,100")
    parser.add_argument("--web-processes", default="1,2,4", help="web processes of the stack, each in turn")
    parser.add_argument("--token-ms", type=float, default=20.0)
    parser.add_argument("--words", type=int, default=100)
    parser.add_argument("--skip-load", action="store_true", help="reuse the rows of a previous run")
    parser.add_argument("--only-sockets", action="store_true", help="measure the websocket load alone")
    args = parser.parse_args()

    django_for_bench(DATABASE, fresh=not args.skip_load)
    from django.contrib.auth import get_user_model

    from bench.retrieval_latency import load_documents
    from bench.sessions import VectorPool, load_messages

    User = get_user_model()
    if args.skip_load:
        owner = User.objects.get(username="bench")
    else:
        owner = User.objects.create_user(username="bench")
        pool = VectorPool(random.Random(11), 3000)
        started = time.perf_counter()
        load_documents(owner, args.chunks, pool)
        load_messages(owner, args.messages, pool)
        print(f"loaded {args.chunks} chunks and {args.messages} messages in {time.perf_counter() - started:.0f} s")
    if not args.only_sockets:
        print("outside the model, per turn (built-in engine):", outside_model(owner, args.turns), flush=True)
        print("prompt tokens at turn 10/100/1000:", prompt_growth(owner), flush=True)
    print("simultaneous websocket chats against the stack (stub model):", flush=True)
    levels = [int(x) for x in args.sockets.split(",")]
    concurrency(owner, levels, args.token_ms, args.words, [int(x) for x in args.web_processes.split(",")])


if __name__ == "__main__":
    main()
