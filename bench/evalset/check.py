"""Validates the evaluation set and prints its counts and a few samples.

A label that points at a heading which no longer exists, or a "paraphrase" that quietly copies the answer's
words, would make retrieval scores meaningless without any error, so this script checks the properties the
set promises after every edit of the files in ``data/``:

- every relevant section exists and is the only place its answering sentence appears;
- lexical queries share at least two content words with the answer, paraphrase queries none (apart from the
  entity's name);
- every conversation's answer location exists and contains the answer, which the current session does not;
- ids are unique, sizes and counts are within bounds, and every Markdown file in ``data/documents/`` is
  listed in ``data/documents.json``.

It prints a fingerprint of the whole set, so two evaluation runs can be shown to have used the same one.

    .venv/bin/python bench/evalset/check.py
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bench.evalset import corpus  # noqa: E402
from bench.evalset.overlap import shared  # noqa: E402


def fingerprint() -> str:
    payload = json.dumps([corpus.documents(), corpus.queries(), corpus.conversations()], sort_keys=True)
    return hashlib.sha256(payload.encode()).hexdigest()


def main() -> int:
    errors: list[str] = []

    def need(cond: bool, message: str) -> None:
        if not cond:
            errors.append(message)

    docs = corpus.documents()
    queries = corpus.queries()
    convs = corpus.conversations()
    evidence = corpus.evidence()
    sections = corpus.section_texts()

    # documents
    need(len(docs) >= 40, f"only {len(docs)} documents")
    need(len({d["key"] for d in docs}) == len(docs), "document keys are not unique")
    need(len({d["filename"] for d in docs}) == len(docs), "filenames are not unique")
    words_per_section = []
    for d in docs:
        need(d["filename"].endswith(".md"), f"{d['key']}: filename {d['filename']!r} does not end in .md")
        need(d["text"].startswith(f"# {d['title']}\n"), f"{d['key']}: text does not start with its title")
        headings = re.findall(r"^## (.+)$", d["text"], flags=re.M)
        need(4 <= len(headings) <= 8, f"{d['key']}: {len(headings)} sections")
        need(len(set(headings)) == len(headings), f"{d['key']}: duplicate headings")
        for h in headings:
            body = sections[(d["key"], h)]
            n_words, n_paras = len(body.split()), len(body.split("\n\n"))
            words_per_section.append(n_words)
            need(150 <= n_words <= 400, f"{d['key']} / {h}: {n_words} words")
            need(2 <= n_paras <= 5, f"{d['key']} / {h}: {n_paras} paragraphs")

    # queries
    need(len(queries) >= 300, f"only {len(queries)} queries")
    need(len({q["id"] for q in queries}) == len(queries), "query ids are not unique")
    need(len({q["query"] for q in queries}) == len(queries), "query texts are not unique")
    overlaps: dict[str, list[int]] = {"lexical": [], "paraphrase": []}
    repeated = 0
    for q in queries:
        need(q["kind"] in ("lexical", "paraphrase", "multi"), f"{q['id']}: kind {q['kind']!r}")
        grade2 = [(r["doc"], r["section"]) for r in q["relevant"] if r["grade"] == 2]
        for r in q["relevant"]:
            need(r["grade"] in (1, 2), f"{q['id']}: grade {r['grade']}")
            need((r["doc"], r["section"]) in sections, f"{q['id']}: no section {r['section']!r} in {r['doc']}")
        need(len(grade2) == (2 if q["kind"] == "multi" else 1), f"{q['id']}: {len(grade2)} grade-2 sections")
        ev = evidence[q["id"]]
        labelled_docs = {doc for doc, _ in grade2}
        for sentence in ev["sentences"]:
            found = [key for key, body in sections.items() if sentence in body]
            # Boilerplate may repeat a sentence verbatim in another document (that is the point of the shared
            # vocabulary), but within the labelled documents only the labelled sections may contain it.
            in_docs = [key for key in found if key[0] in labelled_docs]
            need(bool(in_docs) and set(in_docs) <= set(grade2), f"{q['id']}: answer sentence found in {in_docs}")
            repeated += len(found) > 1
        if q["kind"] in overlaps:
            common = shared(q["query"], ev["sentences"][0], ev["entities"])
            overlaps[q["kind"]].append(len(common))
            if q["kind"] == "lexical":
                need(len(common) >= 2, f"{q['id']}: lexical query shares only {sorted(common)}: {q['query']}")
            else:
                need(not common, f"{q['id']}: paraphrase shares {sorted(common)}: {q['query']} | {ev['sentences'][0]}")

    # conversations
    need(len(convs) >= 60, f"only {len(convs)} conversations")
    need(len({c["id"] for c in convs}) == len(convs), "conversation ids are not unique")
    # the entity's own name, e.g. "Skyline Air" or "billing-api", which an ambiguous follow-up must not contain
    names = corpus.names()
    for c in convs:
        cid, where = c["id"], c["answer_in"]
        need(bool(c["earlier_sessions"]) and bool(c["current_session"]), f"{cid}: empty sessions")
        for s in c["earlier_sessions"]:
            for m in s["messages"]:
                need(m["role"] in ("user", "assistant"), f"{cid}: role {m['role']!r}")
        current = " ".join(m["content"] for m in c["current_session"])
        need(c["answer"] not in current, f"{cid}: answer {c['answer']!r} already in the current session")
        if c["ambiguous"]:
            need(c["followup"] != c["standalone"], f"{cid}: ambiguous follow-up equals its rewrite")
        else:
            need(c["followup"] == c["standalone"], f"{cid}: standalone follow-up differs from its rewrite")
        if where["type"] == "message":
            try:
                text = c["earlier_sessions"][where["session_index"]]["messages"][where["message_index"]]["content"]
            except (IndexError, KeyError):
                errors.append(f"{cid}: answer_in {where} points nowhere")
                continue
            need(c["answer"] in text, f"{cid}: answer {c['answer']!r} not in the message it points at")
            holders = [m for s in c["earlier_sessions"] for m in s["messages"] if c["answer"] in m["content"]]
            need(len(holders) == 1, f"{cid}: answer {c['answer']!r} appears in {len(holders)} earlier messages")
        else:
            body = sections.get((where["doc"], where["section"]))
            need(body is not None, f"{cid}: answer_in {where} points nowhere")
            need(body is not None and c["answer"] in body, f"{cid}: answer {c['answer']!r} not in {where}")
            if c["ambiguous"]:
                need(names[where["doc"]] not in c["followup"], f"{cid}: ambiguous follow-up names the entity")

    # size and files
    size = sum(len(d["text"].encode()) for d in docs) + len(json.dumps([queries, convs]).encode())
    need(size < 3_000_000, f"{size} bytes")
    on_disk = {p.name for p in (corpus.DATA / "documents").glob("*.md")}
    stray = sorted(on_disk - {d["filename"] for d in docs})
    need(not stray, f"Markdown files not listed in documents.json: {stray}")
    here = fingerprint()

    kinds = Counter(q["kind"] for q in queries)
    answer_types = Counter((c["answer_in"]["type"], c["ambiguous"]) for c in convs)
    n_sections = len(sections)
    print(
        f"documents: {len(docs)}  sections: {n_sections}  words/section: {min(words_per_section)}-"
        f"{max(words_per_section)} (mean {sum(words_per_section) / n_sections:.0f})  size: {size / 1e6:.2f} MB"
    )
    print("queries:", len(queries), {k: f"{v} ({v / len(queries):.0%})" for k, v in sorted(kinds.items())})
    print("  grade-1 labels:", sum(1 for q in queries for r in q["relevant"] if r["grade"] == 1))
    print("  answer sentences also found verbatim in another document:", repeated)
    for kind, values in overlaps.items():
        print(f"  {kind}: mean content words shared with the answer sentence {sum(values) / len(values):.2f}")
    print(
        "conversations:",
        len(convs),
        {f"{t}/{'ambiguous' if a else 'standalone'}": n for (t, a), n in sorted(answer_types.items())},
    )
    print("fingerprint:", here[:16])

    print("\nsample queries:")
    for q in [queries[0], queries[3], queries[-1]]:
        print(f"  [{q['kind']}] {q['query']}")
        for r in q["relevant"]:
            print(f"      -> {r['doc']} / {r['section']} (grade {r['grade']})")
    print("\nsample conversations:")
    for c in [next(c for c in convs if c["answer_in"]["type"] == t) for t in ("message", "document")]:
        for m in c["current_session"]:
            print(f"  {m['role']}: {m['content']}")
        print(f"  follow-up: {c['followup']}\n  standalone: {c['standalone']}")
        print(f"  answer: {c['answer']} in {c['answer_in']}\n")

    if errors:
        print(f"\n{len(errors)} problem(s):")
        for e in errors:
            print("  -", e)
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
