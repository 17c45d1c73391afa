"""What reading a model's streamed answer costs a web process: processor time per answer through the text
engine's ``astream``, by the route it streams by (the openai client reading the provider's JSON, or
litellm's wrapper, ``LLM_STREAM_OPENAI_CLIENT``), answers read on one event loop as a web process reads
them, several at a time.

    .venv/bin/python bench/streaming.py [--words 100] [--token-ms 5] [--answers 100] [--at-once 20] [--rounds 3]

The model is the loopback OpenAI-compatible stub the tests use, in a process of its own, streaming one word
per piece every ``--token-ms``: paced, as a model paces them, each piece arrives on its own (with no pause
they arrive in a few large reads, and cost less). Processor time is this process's only, not its waiting.
No database is needed: the calls are left unrecorded.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

ROUTES = {"openai client": True, "litellm": False}


async def _answers(engine, *, count: int, at_once: int) -> int:
    """Reads ``count`` answers, ``at_once`` at a time; the pieces read."""
    from foundation import ai

    async def one() -> int:
        call = ai.StreamedCall(engine=engine, purpose="bench", owner_id=None)
        return len([piece async for piece in engine.astream([{"role": "user", "content": "Go on."}], call=call)])

    pieces = 0
    for _ in range(count // at_once):
        pieces += sum(await asyncio.gather(*[one() for _ in range(at_once)]))
    return pieces


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", type=int, default=100)
    parser.add_argument("--token-ms", type=float, default=5.0)
    parser.add_argument("--answers", type=int, default=100)
    parser.add_argument("--at-once", type=int, default=20)
    parser.add_argument("--rounds", type=int, default=3, help="each route measured this many times, alternately")
    args = parser.parse_args()

    model = subprocess.Popen(
        [sys.executable, "-m", "tests.llm_server", "--words", str(args.words), "--token-ms", str(args.token_ms)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        url = model.stdout.readline().strip()
        os.environ.update(
            DJANGO_SETTINGS_MODULE="config.settings.dev",
            LOG_LEVEL="WARNING",
            LLM_MODEL="openai/stub",
            LLM_API_BASE=url,
            LLM_API_KEY="stub",
        )
        import django

        django.setup()
        from django.conf import settings

        from foundation import ai

        results: dict[str, list[float]] = {route: [] for route in ROUTES}
        for _ in range(args.rounds):
            for route, direct in ROUTES.items():
                settings.LLM_STREAM_OPENAI_CLIENT = direct
                engine = ai.text_engine()
                engine.warm()

                async def measured(engine=engine) -> tuple[float, float, int]:
                    await _answers(engine, count=args.at_once, at_once=args.at_once)  # not measured: connections
                    cpu, wall = time.process_time(), time.perf_counter()
                    pieces = await _answers(engine, count=args.answers, at_once=args.at_once)
                    return time.process_time() - cpu, time.perf_counter() - wall, pieces

                cpu, wall, pieces = asyncio.run(measured())
                per_answer = cpu * 1000 / args.answers
                results[route].append(per_answer)
                print(
                    f"{route:14s} {per_answer:6.1f} ms of processor per answer of {pieces // args.answers} pieces"
                    f" ({args.answers / wall:.0f} answers/s, {args.at_once} at once)",
                    flush=True,
                )
        for route, figures in results.items():
            print(f"{route:14s} per answer: {min(figures):.1f}-{max(figures):.1f} ms over {len(figures)} rounds")
    finally:
        model.terminate()
        model.wait(timeout=10)


if __name__ == "__main__":
    main()
