"""Retrieval quality on a labelled set: recall@k, nDCG@10 and MRR for each retriever configuration,
and for follow-up questions with and without query rewriting.

The corpus, queries and conversations come from ``bench/evalset`` (deterministic, labelled at section
level). Documents are indexed as the worker indexes them, with the configured models. A ranked list
of chunks is judged by the sections it reaches: each section counts once, at its first chunk.

``--set shortdocs`` measures a library of many short documents instead: ``bench/shortdocs``, about 3,000
Debian package descriptions with document-level labels. Each is uploaded as a plain-text file with its
title as the upload's title, as an import of abstracts or catalogue entries would be: a short text has no
headings, and a Markdown ``#`` heading would only add a section that repeats the document. Every query
runs through ``find`` with each configuration, and a ranked list is judged by the documents it reaches:
each document counts once, at its first hit. Results are printed overall and per query kind.

    .venv/bin/python bench/retrieval_eval.py [--json results.json] [--queries N]
    .venv/bin/python bench/retrieval_eval.py --set shortdocs [--limit-docs N] [--json results.json]

``--reuse`` evaluates against the library a previous run indexed (the conversations are stored again),
to compare code or settings quickly; a figure worth reporting comes from a run without it.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._setup import django_for_bench, percentiles

K_VALUES = (1, 3, 5, 10)
CONFIGURATIONS = {
    "flat dense": {"mode": "flat", "fusion": "blend", "retrievers": ("dense",)},
    "flat keyword": {"mode": "flat", "fusion": "blend", "retrievers": ("keyword",)},
    "hybrid (rrf)": {"mode": "flat", "fusion": "rrf"},
    "hybrid (blend)": {"mode": "flat", "fusion": "blend"},
    "hierarchical": {"mode": "hierarchical", "fusion": "blend"},
}


def ndcg(ranked_grades: list[int], ideal_grades: list[int], k: int = 10) -> float:
    def dcg(grades: list[int]) -> float:
        return sum((2**g - 1) / math.log2(i + 2) for i, g in enumerate(grades[:k]))

    ideal = dcg(sorted(ideal_grades, reverse=True))
    return dcg(ranked_grades) / ideal if ideal else 0.0


def judge(ranked: list[str], relevant: dict[str, int]) -> dict[str, float]:
    """Metrics of a ranked list of unique item keys against graded judgments (grade > 0 is relevant)."""
    grades = [relevant.get(key, 0) for key in ranked]
    found = {key for key in ranked if key in relevant}
    first = next((i for i, g in enumerate(grades) if g > 0), None)
    scores = {f"recall@{k}": len(found & set(ranked[:k])) / len(relevant) for k in K_VALUES}
    scores["ndcg@10"] = ndcg(grades, list(relevant.values()))
    scores["mrr"] = 0.0 if first is None else 1.0 / (first + 1)
    return scores


def average(rows: list[dict[str, float]]) -> dict[str, float]:
    return {key: round(sum(r[key] for r in rows) / len(rows), 3) for key in rows[0]} if rows else {}


def section_of(uri: str, sections: dict[str, str]) -> str | None:
    """The labelled section a node lies in: the longest labelled section URI that prefixes it."""
    best = None
    for section_uri in sections:
        if (uri == section_uri or uri.startswith(section_uri + "/")) and (best is None or len(section_uri) > len(best)):
            best = section_uri
    return best


def index_corpus(owner, documents: list[dict]) -> dict[tuple[str, str], str]:
    """Indexes every document; returns (document key, section heading) -> section URI."""
    from documents_app import services
    from documents_app.models import DocumentNode

    started = time.perf_counter()
    sections: dict[tuple[str, str], str] = {}
    for number, doc in enumerate(documents, start=1):
        document, _ = services.document_upload(
            owner=owner, filename=doc["filename"], data=doc["text"].encode(), title=doc["title"], enqueue=False
        )
        services.document_index(document_id=document.id)
        for node in DocumentNode.objects.filter(document=document, kind="section").only("uri", "title"):
            sections.setdefault((doc["key"], node.title.strip()), node.uri)
        if number % 10 == 0:
            print(f"  indexed {number}/{len(documents)} documents ({time.perf_counter() - started:.0f} s)", flush=True)
    return sections


def indexed_sections(owner, documents: list[dict]) -> dict[tuple[str, str], str]:
    """(document key, section heading) -> section URI, of a library indexed before."""
    from documents_app.models import DocumentNode

    keys = {doc["filename"]: doc["key"] for doc in documents}
    sections: dict[tuple[str, str], str] = {}
    nodes = DocumentNode.objects.filter(owner=owner, kind="section").select_related("document")
    for node in nodes.order_by("document__created_at", "level", "position"):
        if node.document.filename in keys:
            sections.setdefault((keys[node.document.filename], node.title.strip()), node.uri)
    return sections


def evaluate_documents(
    owner, queries: list[dict], sections: dict[tuple[str, str], str], configurations: dict | None = None
) -> dict:
    from retrieval_app.services import SearchOptions, retrieval_find

    section_uris = {uri: key for key, uri in sections.items()}
    results: dict[str, dict] = {}
    for name, config in (configurations or CONFIGURATIONS).items():
        rows, by_kind, timings = [], {}, []
        for query in queries:
            relevant = {}
            for label in query["relevant"]:
                uri = sections.get((label["doc"], label["section"]))
                if uri:
                    relevant[uri] = max(relevant.get(uri, 0), label["grade"])
            if not relevant:
                continue
            started = time.perf_counter()
            hits = retrieval_find(
                owner=owner, query=query["query"], limit=40, options=SearchOptions(**config, max_tokens=10**6)
            ).hits
            timings.append((time.perf_counter() - started) * 1000)
            ranked = list(dict.fromkeys(s for s in (section_of(h.uri, section_uris) for h in hits) if s))
            scores = judge(ranked, relevant)
            rows.append(scores)
            by_kind.setdefault(query.get("kind", "all"), []).append(scores)
        results[name] = {
            "all": average(rows),
            "by_kind": {kind: average(kind_rows) for kind, kind_rows in by_kind.items()},
            "latency_ms": percentiles(timings),
            "queries": len(rows),
        }
        print(f"  {name:16s} {results[name]['all']}", flush=True)
    return results


def load_conversations(owner, conversations: list[dict]) -> list[dict]:
    """Stores each scenario's earlier sessions and current session; returns what each follow-up needs."""
    from foundation.tasks import backfill_embeddings
    from retrieval_app.services import retrieval_search
    from sessions_app import services
    from sessions_app.models import ChatSession
    from sessions_app.services import working_set_get

    loaded = []
    # Scenarios share one user's history: each earlier session is stored once, however many refer to it.
    stored: dict[tuple, list[int]] = {}
    for scenario in conversations:
        earlier_ids = []
        for earlier in scenario["earlier_sessions"]:
            key = (earlier["title"], tuple((m["role"], m["content"]) for m in earlier["messages"]))
            if key not in stored:
                session = services.session_create(owner=owner, title=earlier["title"])
                created = services.message_bulk_create(
                    session=session,
                    messages=[services.NewMessage(role=m["role"], content=m["content"]) for m in earlier["messages"]],
                )
                stored[key] = [m.id for m in created]
            earlier_ids.append(stored[key])
        current = services.session_create(owner=owner, title=f"current {scenario['id']}")
        if scenario["current_session"]:
            services.message_bulk_create(
                session=current,
                messages=[
                    services.NewMessage(role=m["role"], content=m["content"]) for m in scenario["current_session"]
                ],
            )
        loaded.append({"scenario": scenario, "session_id": str(current.id), "message_ids": earlier_ids})
    backfill_embeddings()
    # In a chat every user turn is searched, and what it found becomes the session's working set; the
    # follow-up is asked against that state, as it would be in a live conversation.
    for item in loaded:
        item["session"] = ChatSession.objects.get(id=item["session_id"])
        for message in item["scenario"]["current_session"]:
            if message["role"] == "user":
                retrieval_search(owner=owner, query=message["content"], session=item["session"], limit=5)
        item["working_set"] = working_set_get(session_id=item["session_id"]).as_dict()
    print(f"  {len(stored)} earlier sessions stored for {len(loaded)} scenarios", flush=True)
    return loaded


def evaluate_followups(owner, loaded: list[dict], sections: dict[tuple[str, str], str]) -> dict:
    from retrieval_app.services import SearchOptions, retrieval_search
    from sessions_app.services import working_set_clear, working_set_update

    section_uris = {uri: key for key, uri in sections.items()}
    variants = {
        "without rewriting": {"rewrite": False, "text": "followup"},
        "with rewriting": {"rewrite": True, "text": "followup"},
        "standalone question (upper bound)": {"rewrite": False, "text": "standalone"},
    }
    out: dict[str, dict] = {}
    detector = {"ambiguous_rewritten": 0, "ambiguous": 0, "standalone_rewritten": 0, "standalone": 0}
    for name, variant in variants.items():
        rows, timings = [], []
        for item in loaded:
            scenario = item["scenario"]
            answer = scenario["answer_in"]
            if answer["type"] == "message":
                target = f"message:{item['message_ids'][answer['session_index']][answer['message_index']]}"
            else:
                uri = sections.get((answer["doc"], answer["section"]))
                if not uri:
                    continue
                target = uri
            working_set_clear(session_id=item["session_id"])
            state = item["working_set"]
            working_set_update(
                session_id=item["session_id"],
                resolved_terms=state["resolved_terms"],
                documents=state["active_documents"],
                sections=state["active_sections"],
            )
            started = time.perf_counter()
            result = retrieval_search(
                owner=owner,
                query=scenario[variant["text"]],
                session=item["session"],
                limit=10,
                options=SearchOptions(rewrite=variant["rewrite"], max_tokens=10**6),
            )
            timings.append((time.perf_counter() - started) * 1000)
            ranked = []
            for hit in result.hits:
                if hit.origin == "conversation":
                    ranked.append(f"message:{hit.chunk_id}")
                elif hit.origin == "document":
                    ranked.append(section_of(hit.uri, section_uris) or hit.uri)
                else:
                    ranked.append(hit.uri)
            ranked = list(dict.fromkeys(ranked))
            rows.append(judge(ranked, {target: 2}))
            if name == "with rewriting":
                ambiguous = scenario.get("ambiguous", True)
                key = "ambiguous" if ambiguous else "standalone"
                detector[key] += 1
                detector[f"{key}_rewritten"] += int(result.query_plan["rewrite"]["rewritten"])
        out[name] = {"all": average(rows), "latency_ms": percentiles(timings), "queries": len(rows)}
        print(f"  {name:34s} {out[name]['all']}", flush=True)
    out["detector"] = detector
    return out


def grid(owner, documents: list[dict], queries: list[dict]) -> None:
    """nDCG@10 and MRR of hierarchical and blended flat retrieval for a few settings around the defaults."""
    from django.test import override_settings

    sections = indexed_sections(owner, documents)
    compared = {k: v for k, v in CONFIGURATIONS.items() if k in ("hybrid (blend)", "hierarchical")}
    for alpha in (0.3, 0.5, 0.7):
        for weight in (0.2, 0.3, 0.5):
            with override_settings(SCORE_PROPAGATION_ALPHA=alpha, KEYWORD_WEIGHT=weight):
                print(f"alpha={alpha} keyword_weight={weight}", flush=True)
                evaluate_documents(owner, queries, sections, compared)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="also write the results to this file")
    parser.add_argument("--queries", type=int, default=0, help="evaluate only the first N queries")
    parser.add_argument(
        "--grid",
        action="store_true",
        help="reuse the indexed corpus of a previous run and compare settings on the document queries only",
    )
    parser.add_argument("--reuse", action="store_true", help="evaluate the library a previous run indexed")
    parser.add_argument(
        "--set",
        dest="dataset",
        choices=("evalset", "shortdocs"),
        default="evalset",
        help="evalset: 45 manuals, section-level labels (default); shortdocs: ~3,000 short documents",
    )
    parser.add_argument(
        "--limit-docs",
        type=int,
        default=0,
        help="shortdocs: index N documents for a quick run; every document a query is labelled with is kept, so more "
        "than N when the labels alone need more",
    )
    args = parser.parse_args()
    if args.dataset == "shortdocs":
        run_short_documents(args)
        return

    django_for_bench("recollect_eval", fresh=not (args.grid or args.reuse))
    from django.contrib.auth import get_user_model

    from bench.evalset import corpus

    documents, queries, conversations = corpus.documents(), corpus.queries(), corpus.conversations()
    if args.queries:
        queries = queries[: args.queries]
    if args.grid:
        grid(get_user_model().objects.get(username="eval"), documents, queries)
        return
    print(f"corpus: {len(documents)} documents, {len(queries)} queries, {len(conversations)} conversations")
    started = time.perf_counter()
    if args.reuse:
        from sessions_app.models import ChatSession

        owner = get_user_model().objects.get(username="eval")
        ChatSession.objects.filter(owner=owner).delete()
        sections = indexed_sections(owner, documents)
    else:
        owner = get_user_model().objects.create_user(username="eval")
        sections = index_corpus(owner, documents)
    from documents_app.models import DocumentNode

    chunks = DocumentNode.objects.filter(owner=owner, kind="chunk").count()
    print(f"indexed in {time.perf_counter() - started:.0f} s: {chunks} chunks, {len(sections)} labelled sections")

    print("documents (find):")
    document_results = evaluate_documents(owner, queries, sections)
    print("follow-ups (search):")
    loaded = load_conversations(owner, conversations)
    followup_results = evaluate_followups(owner, loaded, sections)
    print("rewrite detector:", followup_results["detector"])
    if args.json:
        Path(args.json).write_text(
            json.dumps({"documents": document_results, "followups": followup_results, "chunks": chunks}, indent=2)
        )


# --- Many short documents (--set shortdocs) ------------------------------------------------------------

SHORT_DATABASE = "recollect_eval_shortdocs"
TABLE_COLUMNS = ("recall@1", "recall@3", "recall@5", "recall@10", "ndcg@10", "mrr")


def limit_documents(documents: list[dict], queries: list[dict], limit: int) -> list[dict]:
    """The first ``limit`` documents in corpus order, after every document some query is labelled with."""
    needed = {label["doc"] for query in queries for label in query["relevant"]}
    kept = [doc for doc in documents if doc["id"] in needed]
    others = [doc for doc in documents if doc["id"] not in needed]
    return kept + others[: max(0, limit - len(kept))]


def index_short_documents(owner, documents: list[dict]) -> dict[str, str]:
    """Uploads and indexes each document as a plain-text file titled with its title; returns document id -> key."""
    from documents_app import services

    started = time.perf_counter()
    keys: dict[str, str] = {}
    for number, doc in enumerate(documents, start=1):
        document, _ = services.document_upload(
            owner=owner, filename=f"{doc['id']}.txt", data=doc["text"].encode(), title=doc["title"], enqueue=False
        )
        services.document_index(document_id=document.id)
        keys[str(document.id)] = doc["id"]
        if number % 100 == 0:
            print(f"  indexed {number}/{len(documents)} documents ({time.perf_counter() - started:.0f} s)", flush=True)
    return keys


def evaluate_short_documents(owner, queries: list[dict], keys: dict[str, str]) -> dict:
    """Every configuration over every query, judged by documents: a document counts once, at its first hit."""
    from retrieval_app.services import SearchOptions, retrieval_find

    indexed = set(keys.values())
    results: dict[str, dict] = {}
    for name, config in CONFIGURATIONS.items():
        rows, by_kind, timings = [], {}, []
        for query in queries:
            relevant = {label["doc"]: label["grade"] for label in query["relevant"] if label["doc"] in indexed}
            if not relevant:
                continue
            started = time.perf_counter()
            hits = retrieval_find(
                owner=owner, query=query["query"], limit=40, options=SearchOptions(**config, max_tokens=10**6)
            ).hits
            timings.append((time.perf_counter() - started) * 1000)
            ranked = list(dict.fromkeys(keys[hit.doc_id] for hit in hits if hit.doc_id in keys))
            scores = judge(ranked, relevant)
            rows.append(scores)
            by_kind.setdefault(query["kind"], []).append(scores)
        results[name] = {
            "all": average(rows),
            "by_kind": {kind: average(kind_rows) for kind, kind_rows in sorted(by_kind.items())},
            "latency_ms": percentiles(timings),
            "queries": len(rows),
        }
        print(f"  {name:16s} {results[name]['all']}", flush=True)
    return results


def print_short_table(results: dict) -> None:
    """One row per configuration: the metrics over all queries and latency; then nDCG@10 and MRR per kind."""
    header = " ".join(f"{column:>9s}" for column in TABLE_COLUMNS)
    print(f"\n{'configuration':16s} {header} {'p50 ms':>8s} {'p95 ms':>8s}")
    for name, result in results.items():
        cells = " ".join(f"{result['all'][column]:9.3f}" for column in TABLE_COLUMNS)
        latency = result["latency_ms"]
        print(f"{name:16s} {cells} {latency['p50']:8.1f} {latency['p95']:8.1f}")
    kinds = sorted({kind for result in results.values() for kind in result["by_kind"]})
    for metric in ("ndcg@10", "mrr", "recall@10"):
        print(f"\n{metric} per kind")
        print(f"{'configuration':16s} " + " ".join(f"{kind:>11s}" for kind in kinds))
        for name, result in results.items():
            cells = " ".join(f"{result['by_kind'].get(kind, {}).get(metric, 0.0):11.3f}" for kind in kinds)
            print(f"{name:16s} {cells}")


def run_short_documents(args) -> None:
    django_for_bench(SHORT_DATABASE, fresh=not args.reuse)
    from django.contrib.auth import get_user_model

    from bench.shortdocs import corpus as shortdocs
    from documents_app.models import DocumentNode

    documents, queries = shortdocs.documents(), shortdocs.queries()
    if args.queries:
        queries = queries[: args.queries]
    if args.limit_docs:
        documents = limit_documents(documents, queries, args.limit_docs)
    kinds = {kind: sum(1 for q in queries if q["kind"] == kind) for kind in shortdocs.KINDS}
    print(f"short documents: {len(documents)} documents, {len(queries)} queries {kinds}")
    print(f"set fingerprint: {shortdocs.fingerprint()[:16]}")
    started = time.perf_counter()
    if args.reuse:
        from documents_app.models import Document

        owner = get_user_model().objects.get(username="eval")
        keys = {
            str(pk): name.removesuffix(".txt")
            for pk, name in Document.objects.filter(owner=owner).values_list("id", "filename")
        }
    else:
        owner = get_user_model().objects.create_user(username="eval")
        keys = index_short_documents(owner, documents)
    chunks = DocumentNode.objects.filter(owner=owner, kind="chunk").count()
    print(f"indexed in {time.perf_counter() - started:.0f} s: {len(keys)} documents, {chunks} chunks")
    print("documents (find), judged per document:")
    results = evaluate_short_documents(owner, queries, keys)
    print_short_table(results)
    if args.json:
        payload = {"set": "shortdocs", "fingerprint": shortdocs.fingerprint(), "documents": results, "chunks": chunks}
        Path(args.json).write_text(json.dumps(payload, indent=2))


if __name__ == "__main__":
    main()
