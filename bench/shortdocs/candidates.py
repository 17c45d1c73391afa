"""Lists the documents that mention any of a query's search terms, to label a query completely.

A query is labelled with the document it was written for, then every other document that answers it
must be found too, or retrieval that returns a near-equivalent package would be marked wrong. This
prints each document whose title or text matches any of the given regular expressions (case-insensitive),
with how many of them it matches, most first, so the labeller reads every candidate's title and grades it.

    .venv/bin/python bench/shortdocs/candidates.py 'synchroni[sz]' 'mirror' 'rsync'
    .venv/bin/python bench/shortdocs/candidates.py --text rsync unison     # print the texts as well
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.shortdocs import corpus


def matches(patterns: list[str]) -> list[tuple[int, dict]]:
    """(number of patterns matched, document) for each document matching at least one, most first."""
    compiled = [re.compile(p, re.I) for p in patterns]
    found = []
    for doc in corpus.documents():
        body = f"{doc['title']}\n{doc['text']}"
        hits = sum(1 for pattern in compiled if pattern.search(body))
        if hits:
            found.append((hits, doc))
    found.sort(key=lambda item: (-item[0], item[1]["id"]))
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("patterns", nargs="+", help="regular expressions, matched case-insensitively")
    parser.add_argument("--text", action="store_true", help="print each document's text under its title")
    parser.add_argument("--limit", type=int, default=60, help="at most this many documents")
    args = parser.parse_args()
    found = matches(args.patterns)
    print(f"{len(found)} documents match")
    for hits, doc in found[: args.limit]:
        print(f"{hits}  {doc['title']}")
        if args.text:
            print("    " + doc["text"].replace("\n", "\n    ") + "\n")


if __name__ == "__main__":
    main()
