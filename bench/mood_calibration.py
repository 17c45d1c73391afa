"""The chat's relevance model and mood, fitted and checked on labelled data.

Every chat turn judges each retrieved passage's relevance (``chat_app.relevance``: a logistic
model over the passage's similarity, the rarity-weighted share of the question's words it and its quote
hold, its score, rank and gap to the best); the built-in answer quotes only passages judged relevant, and
the mood follows them: ``confident`` when a passage reaches CHAT_MOOD_CONFIDENT_SCORE, ``uncertain`` when
only passages above CHAT_RELEVANCE_FLOOR were found (quoted as weakly relevant) or none ("nothing
relevant").

The data:

- ``bench/evalset``: 45 documents and 371 questions with their answering sections (grade 2). A passage
  is relevant when it lies in a grade-2 section of its question.
- ``bench/moodset/offtopic.json``: 103 questions and statements that nothing in those documents answers:
  general knowledge, other domains, near misses (the same kind of document about another product,
  service, company or bank, which the search finds close in meaning) and statements and greetings. Every
  passage found for them is irrelevant.

Two kinds of library ask them: the whole corpus in one library (someone who keeps many documents), and
each document alone in a library of its own (someone who has just uploaded their first manual), where a
word's rarity among the person's documents says little. In one-document libraries each answerable
question is asked of its own document, and each off-topic question and statement of the document the
whole library's search found closest to it (the hardest to decline: "How do I descale the Aurora
kettle?" asked of the only kettle manual there is). Figures are reported for each kind of library.

The documents are indexed as the worker indexes them (see ``retrieval_eval.py``); each question is searched
as a chat turn searches it (``retrieval_search`` in a new session, CHAT_CONTEXT_HITS results, the prompt's
token budget), and every passage is judged with the committed model. A third of the questions, chosen by
a hash of their id, is held out: ``--fit`` fits the model on the rest and prints its constants; the report
gives, for the training and the held-out part, the share of confident answers whose quoted passages are
relevant, the share of off-topic questions declined ("nothing relevant") and of answerable ones wrongly
declined, and a reliability table (judged relevance against the share found relevant).

    .venv/bin/python bench/mood_calibration.py               # index, search, check the committed model
    .venv/bin/python bench/mood_calibration.py --fit         # also fit it again and print the constants
    .venv/bin/python bench/mood_calibration.py --reuse       # reuse the corpus indexed by a previous run
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench._setup import django_for_bench
from bench.retrieval_eval import index_corpus, indexed_sections, section_of

MOODSET = Path(__file__).resolve().parent / "moodset" / "offtopic.json"
DATABASE = "recollect_mood"
# A question is held out when the first byte of its id's SHA-256 falls below this share of 256.
HELD_OUT_SHARE = 1 / 3
# The L2 penalty of the fit (on the coefficients, not the intercept), and its Newton steps.
L2_PENALTY = 1.0
FIT_ITERATIONS = 50
RELIABILITY_BINS = 10
OFF_TOPIC_QUESTIONS = ("general", "other_domain", "near_miss")
LIBRARIES = ("whole", "single")
SAID = ("statement", "greeting")
# Which way each signal should count: +1 for relevance, -1 against it.
EXPECTED_SIGNS = {
    "similarity": 1,
    "best_similarity": 1,
    "score": 1,
    "gap": -1,
    "rank": -1,
    "coverage": 1,
    "quote_coverage": 1,
    "distinctive": 1,
    "quote_distinctive": 1,
    "unknown_name": -1,
}


def held_out(question_id: str) -> bool:
    return hashlib.sha256(question_id.encode()).digest()[0] < 256 * HELD_OUT_SHARE


def questions() -> list[dict]:
    """Labelled questions and off-topic ones: ``{"id", "kind", "text", "relevant": {(doc, section): grade}}``."""
    from bench.evalset import corpus

    found = [
        {
            "id": q["id"],
            "kind": q["kind"],
            "text": q["query"],
            "relevant": {(r["doc"], r["section"]): r["grade"] for r in q["relevant"]},
        }
        for q in corpus.queries()
    ]
    for item in json.loads(MOODSET.read_text(encoding="utf-8")):
        found.append({"id": item["id"], "kind": item["kind"], "text": item["text"], "relevant": {}})
    return found


def collect(owner, sections: dict[tuple[str, str], str], asked: Sequence[dict], *, library: str) -> list[dict]:
    """Searches each question as a chat turn does and judges what it found: one row per question with
    its passages' features, judged relevance and labels."""
    from django.conf import settings

    from chat_app.prompt import context_block
    from chat_app.relevance import judge
    from retrieval_app.models import SearchTrace
    from retrieval_app.services import retrieval_search
    from sessions_app.services import session_create

    by_uri = {uri: key for key, uri in sections.items()}
    rows = []
    started = time.perf_counter()
    for number, question in enumerate(asked, start=1):
        session = session_create(owner=owner, title=question["id"])
        found = retrieval_search(
            owner=owner,
            query=question["text"],
            session=session,
            limit=settings.CHAT_CONTEXT_HITS,
            kind=SearchTrace.Kind.CHAT,
            save_trace=False,
        )
        _, used, _ = context_block(found.hits)
        passages = []
        for judged in judge(owner=owner, query=found.query, hits=used, written=question["text"]):
            section = section_of(judged.hit.uri, by_uri) if judged.hit.origin == "document" else None
            grade = question["relevant"].get(by_uri[section], 0) if section else 0
            quote = " ".join(judged.quote.text.split()) if judged.quote else ""
            passages.append({"uri": judged.hit.uri, "quote": quote, "features": judged.features, "grade": grade})
        rows.append(
            {
                **question,
                "relevant": None,
                "held_out": held_out(question["id"]),
                "passages": passages,
                "library": library,
            }
        )
        if number % 100 == 0:
            print(f"  searched {number}/{len(asked)} ({time.perf_counter() - started:.0f} s)", flush=True)
    return rows


def _matrix(rows: Sequence[dict], features: Sequence[str]):
    import numpy as np

    samples = [p for row in rows for p in row["passages"]]
    x = np.array([[1.0, *(p["features"][name] for name in features)] for p in samples])
    y = np.array([1.0 if p["grade"] == 2 else 0.0 for p in samples])
    return x, y


def _fit_all(rows: Sequence[dict], features: Sequence[str]):
    """L2-regularised logistic regression by Newton's method (iteratively reweighted least squares)."""
    import numpy as np

    x, y = _matrix(rows, features)
    penalty = np.eye(x.shape[1]) * L2_PENALTY
    penalty[0, 0] = 0.0
    weights = np.zeros(x.shape[1])
    for _ in range(FIT_ITERATIONS):
        p = 1 / (1 + np.exp(-(x @ weights)))
        gradient = x.T @ (p - y) + penalty @ weights
        hessian = (x.T * (p * (1 - p))) @ x + penalty
        step = np.linalg.solve(hessian, gradient)
        weights -= step
        if np.abs(step).max() < 1e-9:
            break
    return weights


def fit(rows: Sequence[dict], features: Sequence[str]) -> tuple[float, dict[str, float]]:
    """The model over ``features``, leaving out, one at a time, the signal whose weight comes out most
    against its meaning (a larger gap counting for relevance, say), until none does: such a weight
    fits an accident of the data, not something that holds for another person's documents."""
    kept = list(features)
    while True:
        weights = _fit_all(rows, kept)
        against = {name: weights[1 + i] * EXPECTED_SIGNS[name] for i, name in enumerate(kept)}
        wrong = [name for name, signed in against.items() if signed < 0]
        if not wrong:
            return float(weights[0]), {name: float(weights[1 + i]) for i, name in enumerate(kept)}
        kept.remove(min(wrong, key=against.get))


def answer_of(passages: Sequence[dict], relevances: Sequence[float], floor: float, confident: float, quotes: int):
    """What the turn would do with passages judged so, as ``answer.quoted_passages`` does: ("confident" |
    "weak" | "nothing", the quoted passages), most relevant first, a quote repeating another left out."""
    order = sorted(range(len(relevances)), key=lambda i: -relevances[i])
    strong = [i for i in order if relevances[i] >= confident and passages[i]["quote"]]
    chosen = strong or [i for i in order if relevances[i] >= floor and passages[i]["quote"]]
    kept, seen = [], set()
    for i in chosen:
        if passages[i]["quote"] not in seen:
            seen.add(passages[i]["quote"])
            kept.append(passages[i])
    return ("confident" if strong else "weak" if kept else "nothing"), kept[:quotes]


def _share(part: int, whole: int) -> str:
    return f"{part}/{whole} = {100 * part / whole:.1f}%" if whole else "n/a"


def report(rows: Sequence[dict], judged: Callable[[dict], float], *, floor: float, confident: float, quotes: int):
    """The figures for one part of the data, printed and returned."""
    answers = {"confident": [], "weak": [], "nothing": []}
    for row in rows:
        relevances = [judged(p["features"]) for p in row["passages"]]
        outcome, quoted = answer_of(row["passages"], relevances, floor, confident, quotes)
        answers[outcome].append((row, quoted))
    answerable = [row for row in rows if row["kind"] not in (*OFF_TOPIC_QUESTIONS, *SAID)]
    off_topic = [row for row in rows if row["kind"] in OFF_TOPIC_QUESTIONS]
    said = [row for row in rows if row["kind"] in SAID]
    declined = {row["id"] for row, _ in answers["nothing"]}
    sure, weak = answers["confident"], answers["weak"]
    sure_passages = [p for _, quoted in sure for p in quoted]
    weak_passages = [p for _, quoted in weak for p in quoted]
    figures = {
        "questions and statements": len(rows),
        "confident answers": len(sure),
        "  whose quoted passages are all relevant": _share(
            sum(all(p["grade"] == 2 for p in q) for _, q in sure), len(sure)
        ),
        "  whose first quoted passage is relevant": _share(sum(q[0]["grade"] == 2 for _, q in sure), len(sure)),
        "  quoted passages that are relevant": _share(sum(p["grade"] == 2 for p in sure_passages), len(sure_passages)),
        "  to off-topic questions": sum(r["kind"] in OFF_TOPIC_QUESTIONS for r, _ in sure),
        "statements and greetings given passages (only strong ones are added)": _share(
            sum(r["kind"] in SAID for r, _ in sure), len(said)
        ),
        "weakly relevant answers (uncertain, closest passages quoted)": len(weak),
        "  with a relevant passage among those quoted": _share(
            sum(any(p["grade"] == 2 for p in q) for _, q in weak), len(weak)
        ),
        "  quoted passages that are relevant ": _share(sum(p["grade"] == 2 for p in weak_passages), len(weak_passages)),
        "'nothing relevant' answers (uncertain, nothing quoted)": len(answers["nothing"]),
        "  off-topic questions correctly declined": _share(sum(r["id"] in declined for r in off_topic), len(off_topic)),
        "    of them near misses": _share(
            sum(r["id"] in declined for r in off_topic if r["kind"] == "near_miss"),
            sum(r["kind"] == "near_miss" for r in off_topic),
        ),
        "  answerable questions wrongly declined": _share(
            sum(r["id"] in declined for r in answerable), len(answerable)
        ),
        "    though a relevant passage was retrieved": _share(
            sum(r["id"] in declined and any(p["grade"] == 2 for p in r["passages"]) for r in answerable),
            len(answerable),
        ),
    }
    for name, value in figures.items():
        print(f"  {name:70s} {value}")
    _reliability(rows, judged)
    return figures


def _reliability(rows: Sequence[dict], judged: Callable[[dict], float]) -> None:
    """Judged relevance against the share of passages found relevant, in equal-width bins, with the
    log-loss and Brier score over every passage."""
    bins = [[] for _ in range(RELIABILITY_BINS)]
    losses, briers = [], []
    for row in rows:
        for passage in row["passages"]:
            p = judged(passage["features"])
            y = 1.0 if passage["grade"] == 2 else 0.0
            bins[min(int(p * RELIABILITY_BINS), RELIABILITY_BINS - 1)].append((p, y))
            clipped = min(max(p, 1e-9), 1 - 1e-9)
            losses.append(-(y * math.log(clipped) + (1 - y) * math.log(1 - clipped)))
            briers.append((p - y) ** 2)
    print("  reliability:   judged      passages   mean judged   share relevant")
    for index, samples in enumerate(bins):
        low, high = index / RELIABILITY_BINS, (index + 1) / RELIABILITY_BINS
        if samples:
            mean = sum(p for p, _ in samples) / len(samples)
            share = sum(y for _, y in samples) / len(samples)
            print(f"                 {low:.1f}-{high:.1f}     {len(samples):8d}   {mean:11.3f}   {share:14.3f}")
        else:
            print(f"                 {low:.1f}-{high:.1f}     {0:8d}")
    if losses:
        print(f"  log-loss {sum(losses) / len(losses):.4f}, Brier {sum(briers) / len(briers):.4f}")


SWEPT_CONFIDENT = (0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.8)
SWEPT_FLOORS = (0.1, 0.15, 0.2, 0.25, 0.3, 0.35)


def sweep(rows: Sequence[dict], judged: Callable[[dict], float], quotes: int) -> None:
    """How the two thresholds trade off, for choosing them: the confident score against the precision
    of confident answers, the floor against declining off-topic and answerable questions."""
    answerable = [row for row in rows if row["id"].startswith("q")]
    off_topic = [row for row in rows if row["kind"] in OFF_TOPIC_QUESTIONS]
    relevances = {row["id"]: [judged(p["features"]) for p in row["passages"]] for row in rows}
    print("  confident from   answers   all quoted relevant")
    for confident in SWEPT_CONFIDENT:
        outcomes = [answer_of(row["passages"], relevances[row["id"]], 0.0, confident, quotes) for row in rows]
        sure = [quoted for outcome, quoted in outcomes if outcome == "confident"]
        precise = sum(all(p["grade"] == 2 for p in quoted) for quoted in sure)
        print(f"  {confident:14.2f}   {len(sure):7d}   {_share(precise, len(sure)):>19s}")
    print("  quoted from   off-topic declined   answerable declined")
    for floor in SWEPT_FLOORS:

        def nothing(row: dict, floor: float = floor) -> bool:
            return max(relevances[row["id"]], default=0.0) < floor

        declined = _share(sum(map(nothing, off_topic)), len(off_topic))
        wrongly = _share(sum(map(nothing, answerable)), len(answerable))
        print(f"  {floor:11.2f}   {declined:>18s}   {wrongly:>19s}")


def searched(*, reuse: bool, cached: Path | None) -> list[dict]:
    """The questions searched and judged: read from ``cached`` when it exists, else run (indexing the
    corpus first unless ``reuse``) and written there."""
    from django.contrib.auth import get_user_model

    from bench.evalset import corpus
    from documents_app.models import DocumentNode

    if cached and cached.exists():
        rows = json.loads(cached.read_text())
        print(f"read {len(rows)} searched questions from {cached}")
        return rows
    users = get_user_model().objects
    if reuse:
        owner = users.get(username="mood")
        keys = {doc["filename"]: doc["key"] for doc in corpus.documents()}
        sections = {
            (keys[node.document.filename], node.title.strip()): node.uri
            for node in DocumentNode.objects.filter(owner=owner, kind="section").select_related("document")
        }
    else:
        owner = users.create_user(username="mood")
        started = time.perf_counter()
        sections = index_corpus(owner, corpus.documents())
        print(f"indexed {len(sections)} sections in {time.perf_counter() - started:.0f} s")
    asked = questions()
    print(f"searching {len(asked)} questions as chat turns")
    rows = collect(owner, sections, asked, library="whole")
    rows += single_libraries(rows, asked)
    if cached:
        cached.write_text(json.dumps(rows))
    return rows


def _document_keys(rows: Sequence[dict]) -> dict[str, str]:
    """The document (its key) of each question's best passage in the whole library, where there was one."""
    from bench.evalset import corpus
    from documents_app.models import Document
    from documents_app.uris import parse_resource_uri

    keys = {doc["filename"]: doc["key"] for doc in corpus.documents()}
    closest = {row["id"]: parse_resource_uri(row["passages"][0]["uri"]).doc_id for row in rows if row["passages"]}
    filenames = dict(Document.objects.filter(id__in=set(closest.values())).values_list("id", "filename"))
    return {question: keys[filenames[doc_id]] for question, doc_id in closest.items()}


def _asked_of(question: dict, key: str, closest: dict[str, str]) -> bool:
    """Whether a one-document library of document ``key`` is asked ``question``: the one document that
    answers it, or for a question nothing answers, the document closest to it."""
    answered_in = {doc for (doc, _), grade in question["relevant"].items() if grade == 2}
    return answered_in == {key} if answered_in else closest.get(question["id"]) == key


def single_libraries(whole: Sequence[dict], asked: Sequence[dict]) -> list[dict]:
    """Each document alone in a library of its own (indexed unless a previous run did), asked its own
    questions and the off-topic ones the whole library found it closest to."""
    from django.contrib.auth import get_user_model

    from bench.evalset import corpus

    closest = _document_keys(whole)
    rows, started = [], time.perf_counter()
    for doc in corpus.documents():
        owner, created = get_user_model().objects.get_or_create(username=f"mood-{doc['key']}")
        sections = index_corpus(owner, [doc]) if created else indexed_sections(owner, [doc])
        own = [question for question in asked if _asked_of(question, doc["key"], closest)]
        rows += collect(owner, sections, own, library="single")
    print(f"asked {len(rows)} questions of one-document libraries in {time.perf_counter() - started:.0f} s")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fit", action="store_true", help="fit the model on the training part and print it")
    parser.add_argument("--reuse", action="store_true", help="reuse the corpus indexed by a previous run")
    parser.add_argument("--rows", help="read (if it exists) or write the searched passages to this JSON file")
    parser.add_argument("--sweep", action="store_true", help="print how the thresholds trade off")
    args = parser.parse_args()

    cached = Path(args.rows) if args.rows else None
    django_for_bench(DATABASE, fresh=not args.reuse and not (cached and cached.exists()))
    from django.conf import settings

    from chat_app import answer, relevance

    rows = searched(reuse=args.reuse, cached=cached)
    train = [row for row in rows if not row["held_out"]]
    test = [row for row in rows if row["held_out"]]
    print(f"{len(train)} questions to fit (both kinds of library), {len(test)} held out")

    judged = relevance.probability
    if args.fit:
        intercept, coefficients = fit(train, relevance.FEATURES)
        print("fitted on the training part:")
        print(f"INTERCEPT = {intercept:.3f}")
        print("COEFFICIENTS = {" + ", ".join(f'"{k}": {v:.3f}' for k, v in coefficients.items()) + "}")

        def judged(features: dict) -> float:
            logit = intercept + sum(weight * features[name] for name, weight in coefficients.items())
            return 1 / (1 + math.exp(-logit))

    floor, confident = settings.CHAT_RELEVANCE_FLOOR, settings.CHAT_MOOD_CONFIDENT_SCORE
    print(f"thresholds: quoted from {floor}, confident from {confident}, at most {answer.MAX_QUOTES} quotes")
    thresholds = {"floor": floor, "confident": confident, "quotes": answer.MAX_QUOTES}
    if args.sweep:
        print("training part:")
        sweep(train, judged, answer.MAX_QUOTES)
    for library in LIBRARIES:
        for name, part in (("training part", train), ("held-out part", test)):
            print(f"{name}, {'the whole corpus in one library' if library == 'whole' else 'one-document libraries'}:")
            # Rows kept by an earlier version of this script were all asked of the whole library.
            report([row for row in part if row.get("library", "whole") == library], judged, **thresholds)


if __name__ == "__main__":
    main()
