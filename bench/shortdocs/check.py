"""Validates the short-documents set and prints its counts and fingerprint.

A label pointing at a document that a rebuild dropped, a grade outside 1-2 or a "multi" query that one document
answers would skew every score without an error, so this checks what the set promises:

- document ids are unique, every text has 40-300 words and no Debian " ." line markers, every title starts
  with its package name;
- query ids and texts are unique, every kind is known, every label names an existing document once, with
  grade 1 or 2; every query has a grade-2 document, and a "multi" query at least two;
- the kinds keep their shares (about 40% lexical, 40% paraphrase, 20% multi) and each lexical query shares
  a content word with a document it is labelled with.

It also prints how many content words each kind shares with its answers, so the wording of "paraphrase"
queries can be seen to differ from their documents, and the set's fingerprint, so two evaluation runs can be
shown to have used the same set.

    .venv/bin/python bench/shortdocs/check.py
"""

from __future__ import annotations

import re
import sys
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.shortdocs import corpus

MIN_DOCUMENTS, MIN_QUERIES = 2_500, 300
MIN_WORDS, MAX_WORDS = 40, 300
KIND_SHARES = {"lexical": (0.35, 0.45), "paraphrase": (0.35, 0.45), "multi": (0.15, 0.25)}
# Words too common in requests and descriptions to count as shared meaning.
STOPWORDS = frozenset(
    (
        "a",
        "an",
        "the",
        "and",
        "or",
        "of",
        "to",
        "in",
        "on",
        "for",
        "with",
        "from",
        "by",
        "at",
        "as",
        "is",
        "are",
        "be",
        "it",
        "its",
        "this",
        "that",
        "these",
        "those",
        "my",
        "me",
        "i",
        "we",
        "our",
        "you",
        "your",
        "can",
        "could",
        "would",
        "should",
        "how",
        "what",
        "which",
        "who",
        "when",
        "where",
        "why",
        "do",
        "does",
        "not",
        "no",
        "so",
        "than",
        "then",
        "there",
        "into",
        "out",
        "up",
        "about",
        "all",
        "any",
        "some",
        "each",
        "every",
        "one",
        "two",
        "more",
        "most",
        "other",
        "such",
        "only",
        "own",
        "same",
        "too",
        "very",
        "just",
        "also",
        "use",
        "used",
        "using",
        "get",
        "make",
        "like",
        "want",
        "need",
        "help",
        "them",
        "they",
        "their",
        "it's",
        "i'm",
        "don't",
        "without",
        "while",
        "before",
        "after",
        "over",
        "under",
    )
)


def content_words(text: str) -> set[str]:
    """Lower-case words of three or more letters, a plural's final s dropped, stop words removed."""
    words = {w.rstrip("s") if len(w) > 4 else w for w in re.findall(r"[a-z][a-z0-9+]{2,}", text.lower())}
    return words - STOPWORDS


def check_documents(docs: list[dict], need) -> None:
    need(len(docs) >= MIN_DOCUMENTS, f"only {len(docs)} documents")
    need(len({d["id"] for d in docs}) == len(docs), "document ids are not unique")
    for doc in docs:
        words = len(doc["text"].split())
        need(MIN_WORDS <= words <= MAX_WORDS, f"{doc['id']}: {words} words")
        need(doc["title"].startswith(f"{doc['id']} - "), f"{doc['id']}: title {doc['title']!r}")
        need(not re.search(r"^\s*\.\s*$", doc["text"], flags=re.M), f"{doc['id']}: a ' .' line marker is left")


def check_queries(queries: list[dict], docs: dict[str, dict], need) -> dict[str, list[int]]:
    """Checks every query and returns, per kind, how many content words each shares with its grade-2 documents."""
    need(len(queries) >= MIN_QUERIES, f"only {len(queries)} queries")
    need(len({q["id"] for q in queries}) == len(queries), "query ids are not unique")
    need(len({q["query"].lower() for q in queries}) == len(queries), "query texts are not unique")
    overlap: dict[str, list[int]] = {kind: [] for kind in corpus.KINDS}
    for q in queries:
        labelled = [label["doc"] for label in q["relevant"]]
        need(q["kind"] in corpus.KINDS, f"{q['id']}: kind {q['kind']!r}")
        need(len(set(labelled)) == len(labelled), f"{q['id']}: a document is labelled twice")
        for label in q["relevant"]:
            need(label["doc"] in docs, f"{q['id']}: no document {label['doc']!r}")
            need(label["grade"] in corpus.GRADES, f"{q['id']}: grade {label['grade']!r}")
        answers = [docs[label["doc"]] for label in q["relevant"] if label["grade"] == 2 and label["doc"] in docs]
        need(len(answers) >= (2 if q["kind"] == "multi" else 1), f"{q['id']}: {len(answers)} grade-2 documents")
        asked = content_words(q["query"])
        shared = max((len(asked & content_words(f"{d['title']} {d['text']}")) for d in answers), default=0)
        overlap.setdefault(q["kind"], []).append(shared)
        if q["kind"] == "lexical":
            need(shared >= 1, f"{q['id']}: lexical query shares no word with its answers: {q['query']}")
    kinds = Counter(q["kind"] for q in queries)
    for kind, (low, high) in KIND_SHARES.items():
        share = kinds[kind] / max(1, len(queries))
        need(low <= share <= high, f"{kind}: {share:.0%} of the queries, outside {low:.0%}-{high:.0%}")
    return overlap


def report(docs: list[dict], queries: list[dict], overlap: dict[str, list[int]]) -> None:
    words = [len(d["text"].split()) for d in docs]
    sections = Counter(d["section"] for d in docs)
    print(
        f"documents: {len(docs)}  words: {min(words)}-{max(words)} (mean {sum(words) / len(words):.0f})  "
        f"sections: {len(sections)}"
    )
    print("  largest sections:", ", ".join(f"{s} {n}" for s, n in sections.most_common(12)))
    kinds = Counter(q["kind"] for q in queries)
    print("queries:", len(queries), {k: f"{n} ({n / len(queries):.0%})" for k, n in sorted(kinds.items())})
    grades = Counter(label["grade"] for q in queries for label in q["relevant"])
    labelled = {label["doc"] for q in queries for label in q["relevant"]}
    print(
        f"  labels: {grades[2]} grade 2, {grades[1]} grade 1; {len(labelled)} distinct documents labelled; "
        f"mean labels per query {sum(grades.values()) / len(queries):.1f}"
    )
    for kind, values in overlap.items():
        if values:
            mean = sum(values) / len(values)
            none = sum(1 for v in values if v == 0)
            print(f"  {kind}: content words shared with the closest answer: mean {mean:.2f}, none in {none}")
    print("fingerprint:", corpus.fingerprint()[:16])


def main() -> int:
    errors: list[str] = []

    def need(condition: bool, message: str) -> None:
        if not condition:
            errors.append(message)

    docs, queries = corpus.documents(), corpus.queries()
    check_documents(docs, need)
    overlap = check_queries(queries, {d["id"]: d for d in docs}, need)
    report(docs, queries, overlap)
    if errors:
        print(f"\n{len(errors)} problem(s):")
        for error in errors:
            print("  -", error)
        return 1
    print("OK")
    return 0


if __name__ == "__main__":
    sys.exit(main())
