"""The operators' pages at scale: how long the dashboard's queries take with 1M messages, 100k traces and
300k model calls, for every period, for everyone and for one user; and the trace and conversation pages.

    .venv/bin/python bench/dashboard.py              # 1M messages, 100k traces (about 10 minutes on 2 cores)
    .venv/bin/python bench/dashboard.py --small      # 100k messages, 10k traces
    .venv/bin/python bench/dashboard.py --explain    # also print the plan of each aggregate

The rows are made by SQL in a database of its own (``recollect_bench_dashboard``), spread over 30 days
and 200 users (one of them holding a tenth of everything), with the shapes the product writes: every
message with a 384-float vector (its HNSW index is dropped first, or loading would take hours; the
dashboard never reads it), traces with a dozen timings and stages large enough to be stored out of line,
2% of them failed. After loading, the tables are vacuumed and analysed, as autovacuum would.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from _setup import django_for_bench

USERS = 200
DAYS = 30


def _load(cursor, *, messages: int, traces: int, calls: int) -> dict[str, float]:
    """Fills the tables; returns how long each took (s)."""
    timings = {}

    def step(name: str, sql: str, *params) -> None:
        started = time.perf_counter()
        cursor.execute(sql, params)
        timings[name] = round(time.perf_counter() - started, 1)
        print(f"  {name}: {timings[name]} s", flush=True)

    step(
        "users",
        "INSERT INTO auth_user (password, is_superuser, username, first_name, last_name, email, is_staff,"
        " is_active, date_joined) SELECT '!', false, 'user' || g, '', '', '', false, true, now()"
        " FROM generate_series(1, %s) g",
        USERS,
    )
    sessions = messages // 50
    # One user in ten sessions is "heavy": user 1 holds a tenth of everything.
    step(
        "sessions",
        "INSERT INTO sessions_app_chatsession (id, owner_id, agent_id, title, metadata, created_at, updated_at,"
        " last_message_at, rolling_summary, summary_through_seq)"
        " SELECT gen_random_uuid(), CASE WHEN g %% 10 = 0 THEN 1 ELSE 1 + g %% %s END, '', 'Conversation ' || g,"
        " '{}', now() - (g %% %s) * interval '1 day', now(), now() - (g %% %s) * interval '1 day', '', 0"
        " FROM generate_series(1, %s) g",
        USERS,
        DAYS,
        DAYS,
        sessions,
    )
    cursor.execute("DROP INDEX IF EXISTS message_embedding_hnsw")
    step(
        "messages",
        "WITH s AS (SELECT id, owner_id, created_at, row_number() OVER () AS n FROM sessions_app_chatsession)"
        " INSERT INTO sessions_app_message (embedding, embedding_model, session_id, owner_id, agent_id, seq, role,"
        " content, created_at, token_count, metadata)"
        " SELECT CASE WHEN m.k %% 50 = 49 THEN NULL ELSE array_fill(0.01::real, ARRAY[384])::vector END,"
        " CASE WHEN m.k %% 50 = 49 THEN '' ELSE 'all-MiniLM-L6-v2-int8' END,"
        " s.id, s.owner_id, '', m.k + 1, CASE WHEN m.k %% 2 = 0 THEN 'user' ELSE 'assistant' END,"
        " 'Message ' || m.k || ' about the quarterly report and the export job',"
        " s.created_at + m.k * interval '1 minute',"
        " 12, '{}' FROM s CROSS JOIN generate_series(0, 49) AS m(k)",
    )
    step(
        "traces",
        "INSERT INTO retrieval_app_searchtrace (id, owner_id, session_id, kind, query, rewritten_query,"
        " rewrite_decision, target_uri, plan, stages, document_ids, result_count, results, total_ms, timings,"
        " outcome, error, created_at)"
        " SELECT gen_random_uuid(), CASE WHEN g %% 10 = 0 THEN 1 ELSE 1 + g %% %s END, NULL,"
        " (ARRAY['chat','chat','search','find','recall'])[1 + g %% 5], 'How do I reset the router ' || g, '',"
        ' CASE WHEN g %% 97 = 0 THEN \'{"rewritten": false, "error": "rewrite failed"}\'::jsonb ELSE \'{}\'::jsonb END,'
        " '', '{}', (SELECT jsonb_agg(jsonb_build_object('stage', 'dense', 'ms', 2.5, 'candidates',"
        "   (SELECT jsonb_agg(jsonb_build_object('uri', 'viking://resources/users/1/documents/x/chunk_' || c,"
        "   'score', random())) FROM generate_series(1, 30) c))) FROM generate_series(1, 3)),"
        " '{}', 5, '[]', 40 + random() * 40,"
        " jsonb_build_object('embedding', 5 + random() * 10, 'session_context', 4 + random() * 4, 'rewrite', random(),"
        "  'dense', 2 + random() * 5, 'keyword', 2 + random() * 6, 'fusion', 1 + random() * 3,"
        "  'directories', 4 + random() * 6, 'descent', 1 + random() * 4, 'memories', 3 + random() * 5,"
        "  'conversations', 5 + random() * 8, 'search', 40 + random() * 40, 'prompt', 1 + random(),"
        "  'first_token', 300 + random() * 900, 'turn', 900 + random() * 3000),"
        " CASE WHEN g %% 50 = 0 THEN 'retrieval_failed' WHEN g %% 51 = 0 THEN 'generation_failed' ELSE 'ok' END,"
        " CASE WHEN g %% 50 = 0 THEN 'Search failed: timeout' ELSE '' END,"
        " now() - random() * interval '30 days'"
        " FROM generate_series(1, %s) g",
        USERS,
        traces,
    )
    step(
        "model calls",
        "INSERT INTO retrieval_app_modelcall (kind, purpose, backend, model, owner_id, input_count, input_tokens,"
        " output_tokens, cost_usd, latency_ms, attempts, ok, error, created_at)"
        " SELECT CASE WHEN g %% 3 = 0 THEN 'generation' ELSE 'embedding' END, 'chat', 'litellm',"
        " (ARRAY['gpt-4o-mini', 'text-embedding-3-small', 'claude-haiku'])[1 + g %% 3],"
        " CASE WHEN g %% 10 = 0 THEN 1 ELSE 1 + g %% %s END, 1, 500 + g %% 700, g %% 300,"
        " (g %% 1000) / 1000000.0, 200 + random() * 800, 1, g %% 200 <> 0,"
        " CASE WHEN g %% 200 = 0 THEN 'timeout' ELSE '' END, now() - random() * interval '30 days'"
        " FROM generate_series(1, %s) g",
        USERS,
        calls,
    )
    documents = max(500, messages // 200)
    step(
        "documents",
        "INSERT INTO documents_app_document (id, owner_id, uri, title, filename, media_type, size_bytes,"
        " content_hash, file, status, error, node_count, created_at, updated_at, indexed_at)"
        " SELECT d.id, d.owner, 'viking://resources/users/' || d.owner || '/documents/' || d.id, 'Manual ' || d.g,"
        " 'manual.md', 'text/markdown', 20000, md5(d.g::text), '',"
        " CASE WHEN d.g %% 40 = 0 THEN 'failed' ELSE 'ready' END, CASE WHEN d.g %% 40 = 0 THEN 'damaged' ELSE '' END,"
        " 20, now() - (d.g %% 30) * interval '1 day', now() - (d.g %% 30) * interval '1 day',"
        " now() - (d.g %% 30) * interval '1 day'"
        " FROM (SELECT g, gen_random_uuid() AS id, 1 + g %% %s AS owner FROM generate_series(1, %s) g) d",
        USERS,
        documents,
    )
    step(
        "document nodes",
        "INSERT INTO documents_app_documentnode (embedding_model, document_id, owner_id, uri, parent_uri, kind, level,"
        " position, title, abstract, overview, content, content_hash, overlap_chars, token_count)"
        " SELECT 'all-MiniLM-L6-v2-int8', d.id, d.owner_id, d.uri || '/chunk_' || k, d.uri,"
        " CASE WHEN k = 0 THEN 'section' ELSE 'chunk' END, 1, k, 'Part ' || k, '', '', 'Text', '', 0, 300"
        " FROM documents_app_document d CROSS JOIN generate_series(0, 19) k",
    )
    step(
        "archives and memories",
        "WITH a AS (INSERT INTO sessions_app_archive (embedding_model, session_id, owner_id, agent_id, index, uri,"
        " first_seq, last_seq, message_count, abstract, overview, overview_data, created_at)"
        " SELECT 'all-MiniLM-L6-v2-int8', id, owner_id, '', 1, 'viking://session/' || id || '/history/archive_001',"
        " 1, 40, 40, 'About the export', 'Topic: export', '{}', created_at FROM sessions_app_chatsession"
        " WHERE random() < 0.5 RETURNING id, owner_id)"
        " INSERT INTO sessions_app_memory (embedding_model, owner_id, agent_id, category, key, content, history,"
        " source_archive_id, created_at, updated_at)"
        " SELECT 'all-MiniLM-L6-v2-int8', owner_id, '', 'events', 'fact_' || id, 'A fact', '[]', id, now(), now()"
        " FROM a",
    )
    return timings


def _measure(label: str, fn, repeat: int) -> dict:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - started) * 1000)
    ordered = sorted(samples)
    return {
        "what": label,
        "p50_ms": round(statistics.median(ordered), 1),
        "p95_ms": round(ordered[max(0, round(len(ordered) * 0.95) - 1)], 1),
        "n": len(ordered),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--small", action="store_true")
    parser.add_argument("--explain", action="store_true")
    parser.add_argument("--repeat", type=int, default=7)
    parser.add_argument("--keep", action="store_true", help="reuse the loaded database of an earlier run")
    args = parser.parse_args()
    messages, traces, calls = (100_000, 10_000, 30_000) if args.small else (1_000_000, 100_000, 300_000)

    django_for_bench("recollect_bench_dashboard", fresh=not args.keep)
    from django.db import connection
    from django.test import Client

    from operations_app import selectors, views
    from tests.factories import UserFactory

    if not args.keep:
        print(f"loading {messages:,} messages, {traces:,} traces, {calls:,} model calls ...", flush=True)
        with connection.cursor() as cursor:
            load = _load(cursor, messages=messages, traces=traces, calls=calls)
            started = time.perf_counter()
            cursor.execute("VACUUM ANALYZE")
            load["vacuum analyze"] = round(time.perf_counter() - started, 1)
        print("  vacuum analyze:", load["vacuum analyze"], "s")
    with connection.cursor() as cursor:
        cursor.execute("SELECT count(*) FROM sessions_app_message")
        stored = cursor.fetchone()[0]
        cursor.execute("SELECT pg_size_pretty(pg_database_size(current_database()))")
        size = cursor.fetchone()[0]
    print(f"\n{stored:,} messages stored; database {size}\n")

    results = []
    for period_name in ("24h", "7d", "30d"):
        period = selectors.period_of(period_name)
        for who, owner_id in (("everyone", None), ("the heaviest user", 1), ("a light user", 7)):
            tag = f"{period_name}, {who}"
            # As the page does: the activity's counts decide whether the percentiles read a sample.
            totals = selectors.dashboard_activity(period=period, owner_id=owner_id).totals
            traces, turns = sum(totals.values()), totals["chat"]
            for name, fn in (
                ("activity", lambda p=period, o=owner_id: selectors.dashboard_activity(period=p, owner_id=o)),
                (
                    "latency per stage",
                    lambda p=period, o=owner_id, n=traces: selectors.dashboard_latency(period=p, owner_id=o, traces=n),
                ),
                (
                    "latency per stage, unsampled",
                    lambda p=period, o=owner_id: selectors.dashboard_latency(period=p, owner_id=o),
                ),
                (
                    "turn latency",
                    lambda p=period, o=owner_id, n=turns: selectors.dashboard_turn_latency(
                        period=p, owner_id=o, turns=n
                    ),
                ),
                ("costs", lambda p=period, o=owner_id: selectors.dashboard_costs(period=p, owner_id=o)),
                ("failures", lambda p=period, o=owner_id: selectors.dashboard_failures(period=p, owner_id=o)),
                ("ingestion", lambda p=period, o=owner_id: selectors.dashboard_ingestion(period=p, owner_id=o)),
                ("storage", lambda o=owner_id: selectors.dashboard_storage(owner_id=o)),
                ("active users", lambda p=period: selectors.users_with_activity(period=p)),
            ):
                if name in ("storage", "active users") and period_name != "30d":
                    continue  # the same whatever the period
                results.append(_measure(f"{tag}: {name}", fn, args.repeat))

    # The whole page as an operator gets it (queries and rendering; the workers' answer is cached).
    operator = UserFactory(username=f"operator-{time.time_ns()}", is_staff=True, is_superuser=True)
    client = Client(headers={"host": "localhost"})  # a host the development settings serve
    client.force_login(operator)

    def page(path: str) -> None:
        response = client.get(path)
        assert response.status_code == 200, (path, response.status_code)

    views.cache.set(views.QUEUE_STATUS_KEY, {"problems": [], "queues": {}, "in_progress": 0}, 3600)
    # The first load of a period computes storage and the active users; the next reuse them (KEPT_FOR_S).
    for period_name in ("24h", "7d", "30d"):
        for key in (f"ops:storage:{None}", f"ops:storage:{1}", f"ops:users:{period_name}"):
            views.cache.delete(key)
    for period_name in ("24h", "7d", "30d"):
        for who in ("", "&user=user1"):
            path = f"/admin/ops/?period={period_name}{who}"
            results.append(_measure(f"page {path}", lambda path=path: page(path), max(3, args.repeat // 2)))
    with connection.cursor() as cursor:
        cursor.execute("SELECT id, session_id FROM retrieval_app_searchtrace LIMIT 1")
        trace_id, _ = cursor.fetchone()
        cursor.execute("SELECT id FROM sessions_app_chatsession WHERE owner_id = 1 LIMIT 1")
        session_id = cursor.fetchone()[0]
    results.append(_measure("page trace", lambda: page(f"/admin/ops/traces/{trace_id}/"), args.repeat))
    results.append(_measure("page conversation", lambda: page(f"/admin/ops/sessions/{session_id}/"), args.repeat))

    width = max(len(r["what"]) for r in results)
    print(f"{'what':<{width}}  {'p50 ms':>8}  {'p95 ms':>8}")
    for r in results:
        print(f"{r['what']:<{width}}  {r['p50_ms']:>8}  {r['p95_ms']:>8}")
    if args.explain:
        period = selectors.period_of("30d")
        with connection.cursor() as cursor:
            sql = selectors._LATENCY_SQL.format(owner="")
            cursor.execute("EXPLAIN (ANALYZE, BUFFERS) " + sql, [period.start])
            print("\n".join(row[0] for row in cursor.fetchall()))
            cursor.execute(
                "EXPLAIN (ANALYZE, BUFFERS) SELECT owner_id, count(*), count(*) FILTER (WHERE embedding_model <> '')"
                " FROM sessions_app_message GROUP BY owner_id"
            )
            print("\n".join(row[0] for row in cursor.fetchall()))
    print(json.dumps({"messages": stored, "traces": traces, "model_calls": calls, "database": size}))


if __name__ == "__main__":
    main()
