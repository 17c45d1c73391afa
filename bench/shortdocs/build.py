"""Builds ``data/documents.jsonl`` from Debian's package descriptions, as apt keeps them on this machine.

Debian publishes each package's one-line summary in its ``Packages`` index and the long description in
``Translation-en`` (fetched by ``apt-get update -o Acquire::Languages=en``; the plain ``apt-get update`` of a
container leaves translations out). This script reads both from ``/var/lib/apt/lists``, keeps one package per
source package whose long description has 40-300 words, drops near-duplicates and takes a fixed share from
each Debian section, so the set mixes science, games, networking, desktop, sound, editors, databases,
education, electronics, fonts and more. The choice depends only on the index files, never on chance: a
package's place in its section's queue is the hash of its name.

    .venv/bin/python bench/shortdocs/build.py            # rewrites data/documents.jsonl
    .venv/bin/python bench/shortdocs/build.py --stats    # only prints what it would keep, per section

The committed ``documents.jsonl`` is the set; rerunning this on a later index (new package versions) may
change a few descriptions, and ``check.py`` then reports labels whose documents went missing.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import shutil
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

LISTS = Path("/var/lib/apt/lists")
OUT = Path(__file__).resolve().parent / "data" / "documents.jsonl"
MIN_WORDS, MAX_WORDS = 40, 300
# Near-duplicates: two descriptions sharing this share of their 4-word shingles are one document.
DUPLICATE_JACCARD = 0.4
SHINGLE = 4

# How many documents each Debian section gives, in the order the sections are filled. Library
# sections (bindings for one language) get a small share: a person looks for software more often
# than for a binding, but "a Python library to read EXIF tags" is a real question too.
QUOTAS = {
    "science": 210,
    "games": 210,
    "net": 200,
    "utils": 200,
    "admin": 150,
    "sound": 150,
    "graphics": 150,
    "x11": 100,
    "gnome": 70,
    "kde": 70,
    "xfce": 25,
    "editors": 90,
    "text": 120,
    "database": 70,
    "education": 10,
    "electronics": 70,
    "hamradio": 50,
    "fonts": 120,
    "math": 90,
    "video": 80,
    "web": 80,
    "httpd": 40,
    "mail": 80,
    "comm": 40,
    "news": 10,
    "vcs": 40,
    "devel": 150,
    "interpreters": 50,
    "shells": 15,
    "misc": 60,
    "otherosfs": 40,
    "tex": 40,
    "embedded": 10,
    "python": 60,
    "perl": 25,
    "ruby": 15,
    "javascript": 15,
    "java": 20,
    "gnu-r": 20,
    "golang": 15,
    "rust": 4,
    "php": 10,
    "lisp": 10,
    "ocaml": 5,
    "haskell": 10,
}
# Parts of a source package that only repeat the main package's description, or add little to it.
SUPPLEMENT = re.compile(
    r"(-dev|-doc|-docs|-dbg|-dbgsym|-data|-common|-examples|-tests?|-l10n|-i18n|-locales?|-headers|-src|-source"
    r"|-dev-common|-plugins?-dev|-build-deps|-testsuite)$"
)
SONAME = re.compile(r"^lib.*\d[a-z]?(-\d+)?(t64|v5|c2a?|ldbl)?$")
LIST_ITEM = re.compile(r"^([*+o-]|\d+[.)])\s")
NOT_A_PROGRAM = re.compile(r"transitional|dummy package|metapackage|meta-package|virtual package", re.I)


def _read_index(path: Path) -> str:
    if path.suffix != ".lz4":
        return path.read_text(encoding="utf-8")
    lz4cat = shutil.which("lz4cat")
    if lz4cat is None:
        sys.exit("lz4cat is needed to read apt's compressed indexes: apt-get install lz4")
    return subprocess.run([lz4cat, str(path)], check=True, capture_output=True, text=True).stdout


def _stanzas(text: str):
    for block in text.split("\n\n"):
        fields, key = {}, None
        for line in block.split("\n"):
            if line.startswith((" ", "\t")) and key:
                fields[key] += "\n" + line
            elif ":" in line:
                key, _, value = line.partition(":")
                fields[key] = value.strip()
        if "Package" in fields:
            yield fields


def long_description(raw: str) -> str:
    """Debian's long-description lines as text: " ." separates paragraphs, two leading spaces keep a
    line as it is (lists, examples), other lines flow into their paragraph."""
    paragraphs, current = [], []
    in_item = False  # inside a verbatim list item, whose wrapped lines continue it
    for line in raw.split("\n"):
        stripped = line.strip()
        if stripped == ".":
            paragraphs.append(current)
            current, in_item = [], False
        elif line.startswith("  "):
            if in_item and not LIST_ITEM.match(stripped):
                current.append(" " + stripped)
                continue
            in_item = bool(LIST_ITEM.match(stripped))
            current.append("\n" + stripped)
        else:
            in_item = False
            current.append(" " + stripped)
    paragraphs.append(current)
    out = []
    for lines in paragraphs:
        text = "".join(lines).strip()
        text = re.sub(r"[ \t]+", " ", text).replace(" \n", "\n")
        if text:
            out.append(text)
    return "\n\n".join(out)


def packages() -> dict[str, dict]:
    """Package name -> section, source, summary and long description, for amd64 and all."""
    descriptions: dict[tuple[str, str], str] = {}
    for path in sorted(LISTS.glob("*_i18n_Translation-en*")):
        for stanza in _stanzas(_read_index(path)):
            full = stanza.get("Description-en", "")
            _summary, _, rest = full.partition("\n")
            descriptions[(stanza["Package"], stanza.get("Description-md5", ""))] = rest
    if not descriptions:
        sys.exit("No Translation-en index: run  apt-get update -o Acquire::Languages=en  first.")
    found: dict[str, dict] = {}
    # The release's own index first; its updates may replace a package's entry.
    for path in sorted(LISTS.glob("*_binary-amd64_Packages*"), key=lambda p: ("updates" in p.name, p.name)):
        for stanza in _stanzas(_read_index(path)):
            name = stanza["Package"]
            text = descriptions.get((name, stanza.get("Description-md5", "")))
            if text is None:
                continue
            found[name] = {
                "name": name,
                "source": stanza.get("Source", name).split(" ")[0],
                "section": stanza.get("Section", "misc").split("/")[-1],
                "summary": stanza.get("Description", "").strip(),
                "text": long_description(text),
            }
    return found


def _rank(name: str) -> str:
    return hashlib.sha256(name.encode()).hexdigest()


def candidates(found: dict[str, dict]) -> dict[str, list[dict]]:
    """One package per source: the one named like its source if it qualifies, else the shortest name."""
    by_source: dict[str, list[dict]] = defaultdict(list)
    for pkg in found.values():
        words = len(pkg["text"].split())
        if pkg["section"] not in QUOTAS or not (MIN_WORDS <= words <= MAX_WORDS):
            continue
        if SUPPLEMENT.search(pkg["name"]) or SONAME.match(pkg["name"]):
            continue
        if NOT_A_PROGRAM.search(pkg["summary"]) or NOT_A_PROGRAM.search(pkg["text"]):
            continue
        by_source[pkg["source"]].append(pkg)
    by_section: dict[str, list[dict]] = defaultdict(list)
    for source, pkgs in by_source.items():
        best = min(pkgs, key=lambda p: (p["name"] != source, len(p["name"]), p["name"]))
        by_section[best["section"]].append(best)
    for pkgs in by_section.values():
        pkgs.sort(key=lambda p: _rank(p["name"]))
    return by_section


def _shingles(text: str) -> set[int]:
    words = re.findall(r"[a-z0-9]+", text.lower())
    return {hash(" ".join(words[i : i + SHINGLE])) for i in range(max(1, len(words) - SHINGLE + 1))}


def select(by_section: dict[str, list[dict]]) -> list[dict]:
    """Fills each section's quota in hash order, skipping a description too close to one already kept."""
    kept: list[dict] = []
    postings: dict[int, list[int]] = defaultdict(list)
    shingle_sets: list[set[int]] = []
    summaries: set[str] = set()
    for section, quota in QUOTAS.items():
        taken = 0
        for pkg in by_section.get(section, []):
            if taken >= quota:
                break
            own = _shingles(pkg["text"])
            shared = Counter(i for s in own for i in postings.get(s, ()))
            if any(n / len(own | shingle_sets[i]) >= DUPLICATE_JACCARD for i, n in shared.items()):
                continue
            if pkg["summary"].lower() in summaries:
                continue
            summaries.add(pkg["summary"].lower())
            for s in own:
                postings[s].append(len(kept))
            shingle_sets.append(own)
            kept.append(pkg)
            taken += 1
    return kept


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--stats", action="store_true", help="print per-section counts without writing")
    args = parser.parse_args()
    by_section = candidates(packages())
    kept = select(by_section)
    per_section = Counter(p["section"] for p in kept)
    for section in QUOTAS:
        print(f"{section:14s} {per_section[section]:4d} of {len(by_section.get(section, [])):5d} candidates")
    print("documents:", len(kept))
    if args.stats:
        return
    kept.sort(key=lambda p: p["name"])
    with OUT.open("w", encoding="utf-8") as out:
        for pkg in kept:
            doc = {
                "id": pkg["name"],
                "title": f"{pkg['name']} - {pkg['summary']}",
                "section": pkg["section"],
                "text": pkg["text"],
            }
            out.write(json.dumps(doc, ensure_ascii=False) + "\n")
    print("written:", OUT)


if __name__ == "__main__":
    main()
