"""Sessions and memory benchmark: message writes through the API, recall latency with 10k and 100k
stored messages for one user among several, commit of a 200-turn session, and the history context at
10/100/1000 turns.

    .venv/bin/python bench/sessions.py            # full run (about 10 minutes on 2 cores)
    .venv/bin/python bench/sessions.py --small    # a quick run: 2k and 10k messages

A pool of distinct sentences is embedded for real by the configured model (the local MiniLM by
default), and its throughput reported; each stored message then takes a pooled sentence's vector
plus a little noise, so that 200k messages load in minutes rather than the hour real embedding
would take on 2 cores. Search latency depends on the index and the data's shape, not on which
model made the vectors.
"""

from __future__ import annotations

import argparse
import json
import random
import time

from _setup import Timer, django_for_bench, percentiles

SUBJECTS = [
    "the billing service",
    "the Kafka consumer",
    "the SSO login",
    "the invoice export",
    "the Lyon office",
    "the hiring plan",
    "the on-call rota",
    "the iOS release",
    "the data warehouse",
    "the GDPR audit",
    "the marketing budget",
    "the support backlog",
    "the Postgres upgrade",
    "the mobile onboarding",
    "the quarterly report",
    "the vendor contract",
    "the test flakiness",
    "the CDN bill",
]
VERBS = [
    "is blocked by",
    "needs a decision on",
    "was delayed because of",
    "depends on",
    "was fixed after",
    "should be reviewed with",
    "costs more since",
    "got faster thanks to",
]
CAUSES = [
    "the new retention policy",
    "a missing index",
    "the holiday freeze",
    "an expired certificate",
    "the vendor's rate limit",
    "the schema migration",
    "a memory leak in the worker",
    "the legal review",
    "the budget cut",
    "a misconfigured load balancer",
    "the timezone bug",
    "the new pricing page",
]


def sentence(rng: random.Random) -> str:
    return (
        f"{rng.choice(SUBJECTS).capitalize()} {rng.choice(VERBS)} {rng.choice(CAUSES)}; "
        f"ticket OPS-{rng.randint(100, 9999)} tracks it for week {rng.randint(1, 52)}."
    )


class VectorPool:
    """Real embeddings of distinct sentences, reused with noise for bulk loading."""

    def __init__(self, rng: random.Random, size: int) -> None:
        import numpy as np

        from foundation import ai

        self.rng = rng
        self.np_rng = np.random.default_rng(rng.randint(0, 2**31))
        self.texts = list(dict.fromkeys(sentence(rng) for _ in range(size * 2)))[:size]
        started = time.perf_counter()
        vectors, self.model = ai.embed_texts(self.texts, purpose="bench")
        self.embed_seconds = time.perf_counter() - started
        self.vectors = np.array(vectors, dtype=np.float32)

    def sample(self, count: int):
        import numpy as np

        picks = self.np_rng.integers(0, len(self.texts), size=count)
        noisy = self.vectors[picks] + self.np_rng.normal(0, 0.02, size=(count, self.vectors.shape[1]))
        noisy /= np.linalg.norm(noisy, axis=1, keepdims=True)
        return [f"{self.texts[i]} (note {self.rng.randint(1, 10**6)})" for i in picks], noisy.tolist()


def load_messages(owner, count: int, pool: VectorPool, *, per_session: int = 50) -> None:
    from foundation import ai
    from sessions_app.models import ChatSession, Message

    made = 0
    while made < count:
        sessions = ChatSession.objects.bulk_create(
            [ChatSession(owner=owner, title=f"Bench session {made // per_session + i}") for i in range(40)]
        )
        rows = []
        for session in sessions:
            if made >= count:
                break
            texts, vectors = pool.sample(min(per_session, count - made))
            rows += [
                Message(
                    session=session,
                    owner=owner,
                    seq=i + 1,
                    role="user" if i % 2 == 0 else "assistant",
                    content=text,
                    token_count=ai.estimate_tokens(text),
                    embedding=vector,
                    embedding_model=pool.model,
                )
                for i, (text, vector) in enumerate(zip(texts, vectors, strict=True))
            ]
            made += len(texts)
        Message.objects.bulk_create(rows, batch_size=2000)


def bench_recall(owner, rng: random.Random, queries: int = 200) -> dict:
    from retrieval_app.recall import memory_recall

    samples = []
    sources = set()
    for _ in range(queries):
        query = f"What happened with {rng.choice(SUBJECTS)} and {rng.choice(CAUSES)}?"
        with Timer() as timer:
            result = memory_recall(owner=owner, query=query)
        samples.append(timer.ms)
        sources.add(result["source"])
    return {**percentiles(samples[10:]), "sources": sorted(sources)}


def bench_writes(client, session_id: str, *, batch: int, calls: int) -> dict:
    samples = []
    rng = random.Random(batch)
    for _ in range(calls):
        body = {"messages": [{"role": "user", "content": sentence(rng)} for _ in range(batch)]}
        with Timer() as timer:
            response = client.post(f"/api/sessions/{session_id}/messages", body, content_type="application/json")
        assert response.status_code == 201, response.content
        samples.append(timer.ms)
    return percentiles(samples[5:])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--small", action="store_true")
    args = parser.parse_args()
    sizes = (2_000, 10_000) if args.small else (10_000, 100_000)
    others = 4

    django_for_bench()
    from django.contrib.auth import get_user_model
    from django.db import connection
    from django.test import Client
    from rest_framework.authtoken.models import Token

    from foundation.ai.embeddings import active_embedding_model
    from sessions_app import services
    from sessions_app.models import ChatSession, Message

    rng = random.Random(7)
    users = get_user_model()
    target = users.objects.create_user("bench-target")
    crowd = [users.objects.create_user(f"bench-other-{i}") for i in range(others)]
    report: dict = {"embedding_model": active_embedding_model(), "recall": {}}

    pool = VectorPool(rng, 1500 if args.small else 6000)
    report["embedding_throughput_texts_per_s"] = round(len(pool.texts) / pool.embed_seconds, 1)
    loaded = 0
    for size in sizes:
        load_messages(target, size - loaded, pool)
        for other in crowd:
            load_messages(other, (size - loaded) // 4, pool)
        loaded = size
        with connection.cursor() as cursor:
            cursor.execute("VACUUM ANALYZE sessions_app_message")
        total = Message.objects.count()
        report["recall"][f"{size} messages of the user ({total} in all)"] = bench_recall(target, rng)

    token = Token.objects.create(user=target)
    client = Client(HTTP_AUTHORIZATION=f"Token {token.key}", HTTP_HOST="localhost")
    session_id = client.post("/api/sessions", {"title": "writes"}, content_type="application/json").json()["session_id"]
    report["write_1_message_ms"] = bench_writes(client, session_id, batch=1, calls=205)
    report["write_100_messages_ms"] = bench_writes(client, session_id, batch=100, calls=45)

    turns = [
        services.NewMessage("user" if i % 2 == 0 else "assistant", sentence(rng) + " " + sentence(rng))
        for i in range(200)
    ]
    commit_ms = []
    for _ in range(5):
        session = ChatSession.objects.create(owner=target, title="200 turns")
        services.message_bulk_create(session=session, messages=turns)
        with Timer() as timer:
            result = services.session_commit(session=session)
        commit_ms.append(timer.ms)
    report["commit_200_turns_ms"] = percentiles(commit_ms)
    report["commit_200_turns_memory_diff"] = {k: len(v) for k, v in result.memory_diff.items()}

    history = {}
    for length in (10, 100, 1000):
        session = ChatSession.objects.create(owner=target, title=f"{length} turns")
        services.message_bulk_create(
            session=session,
            messages=[services.NewMessage("user" if i % 2 == 0 else "assistant", sentence(rng)) for i in range(length)],
        )
        context = services.session_history_context(session=session)
        history[f"{length} turns"] = {
            "tokens": context.token_estimate,
            "verbatim_turns": len(context.turns),
            "summary_words": len(context.summary.split()),
        }
    report["history_context"] = history
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
