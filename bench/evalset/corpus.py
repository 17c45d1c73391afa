"""The evaluation set: documents, labelled queries and multi-session conversations.

Retrieval quality is easy to fool yourself about with a handful of hand-picked questions, and expensive to
measure with a model in the loop. This module builds a fixed corpus from fact tables (``fam_*.py``) and one
user's chat history (``memories.py``) so that every query has known relevant sections and every follow-up has
a known answer location, with no network and no model calls. All randomness comes from ``random.Random``
seeded with fixed strings, so the output is identical on every run and every machine.

    from bench.evalset import corpus
    corpus.documents()      # 45 Markdown documents
    corpus.queries()        # section-level relevance labels, graded 2 (answers) or 1 (related)
    corpus.conversations()  # follow-ups to rewrite, with where their answers live
"""

from __future__ import annotations

import copy
import random
import re
from dataclasses import dataclass, field
from functools import cache

from . import fam_finance, fam_hr, fam_legal, fam_products, fam_recipes, fam_runbooks, fam_travel, memories
from .overlap import shared
from .schema import Fact, Family

FAMILIES: tuple[Family, ...] = (
    fam_products.FAMILY,
    fam_runbooks.FAMILY,
    fam_hr.FAMILY,
    fam_legal.FAMILY,
    fam_recipes.FAMILY,
    fam_travel.FAMILY,
    fam_finance.FAMILY,
)

# Per document: 3 lexical + 4 paraphrase single-section queries; multi-section queries are added on top so
# that they make up about 15% of the total.
LEXICAL_PER_DOC = 3
PARAPHRASE_PER_DOC = 4
MULTI_QUERIES = 56

SECTION_WORDS = (150, 400)


@dataclass
class _Rendered:
    fact: Fact
    ctx: dict[str, str]
    sentence: str
    section: str
    xref_section: str | None = None


@dataclass
class _Doc:
    key: str
    title: str
    filename: str
    family: Family
    ctx: dict[str, str]
    sections: list[tuple[str, str]] = field(default_factory=list)
    facts: dict[str, _Rendered] = field(default_factory=dict)

    def text(self) -> str:
        parts = [f"# {self.title}", self.ctx["_intro"]]
        for heading, body in self.sections:
            parts += [f"## {heading}", body]
        return "\n\n".join(parts) + "\n"


def _cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def _fmt(template: str, ctx: dict[str, str]) -> str:
    # Sentence case, except where the text opens with a value: "billing-api" stays as it is spelt.
    text = template.format_map(ctx)
    return text if template.startswith("{") else _cap(text)


def _words(text: str) -> int:
    return len(text.split())


def _entity_ctx(entity: dict[str, str]) -> dict[str, str]:
    ctx = dict(entity)
    ctx["Ref"] = _cap(entity["ref"])
    ctx.setdefault("Name", _cap(entity["name"]))
    return ctx


def _paragraphs(rng: random.Random, sentences: list[str]) -> str:
    # 2-5 paragraphs of roughly equal length; which ones get the extra sentence varies per section
    n = max(2, min(5, round(len(sentences) / 3)))
    sizes = [len(sentences) // n] * n
    for i in rng.sample(range(n), len(sentences) % n):
        sizes[i] += 1
    out, start = [], 0
    for size in sizes:
        out.append(" ".join(sentences[start : start + size]))
        start += size
    return "\n\n".join(out)


def _build_doc(family: Family, entity: dict[str, str]) -> _Doc:
    rng = random.Random(f"doc:{entity['key']}")
    ctx = _entity_ctx(entity)
    ctx["_intro"] = _fmt(rng.choice(family.intro), ctx)
    doc = _Doc(key=entity["key"], title=entity["title"], filename=entity["filename"], family=family, ctx=ctx)

    # Dropping one or two sections (never the first) keeps documents of a family from being perfectly parallel.
    headings = list(family.sections)
    for _ in range(rng.choice([0, 1, 1, 2])):
        headings.remove(rng.choice(headings[1:]))

    by_section: dict[str, list[str]] = {h: [] for h in headings}
    for f in family.facts:
        if f.section not in by_section:
            continue
        fctx = {**ctx, **f.gen(rng, entity)}
        rendered = _Rendered(fact=f, ctx=fctx, sentence=_fmt(rng.choice(f.says), fctx), section=f.section)
        if f.answer.format_map(fctx) not in rendered.sentence:
            raise ValueError(f"{doc.key}/{f.key}: answer {f.answer!r} is not verbatim in {rendered.sentence!r}")
        by_section[f.section].append(rendered.sentence)
        if f.xref and f.xref[0] in by_section:
            rendered.xref_section = f.xref[0]
            by_section[f.xref[0]].append(_fmt(rng.choice(f.xref[1]), fctx))
        doc.facts[f.key] = rendered

    common = list(family.common)
    rng.shuffle(common)
    for heading in headings:
        pool = list(family.fillers[heading])
        rng.shuffle(pool)
        lead = _fmt(pool.pop(), ctx)
        body = list(by_section[heading])
        target = rng.randint(170, 280)
        while _words(" ".join([lead, *body])) < target and (pool or common):
            body.append(_fmt(pool.pop() if pool else common.pop(), ctx))
        rng.shuffle(body)
        words = _words(" ".join([lead, *body]))
        if not SECTION_WORDS[0] <= words <= SECTION_WORDS[1]:
            raise ValueError(f"{doc.key}/{heading}: {words} words; add fillers to fam_{family.name}.py")
        doc.sections.append((heading, _paragraphs(rng, [lead, *body])))
    return doc


@dataclass
class _Built:
    docs: list[_Doc]
    queries: list[dict]
    evidence: dict[str, dict]
    conversations: list[dict]


def _relevance(doc: _Doc, r: _Rendered) -> list[dict]:
    rel = [{"doc": doc.key, "section": r.section, "grade": 2}]
    if r.xref_section:
        rel.append({"doc": doc.key, "section": r.xref_section, "grade": 1})
    return rel


def _single_queries(docs: list[_Doc]) -> list[tuple[dict, dict]]:
    out = []
    for doc in docs:
        rng = random.Random(f"queries:{doc.key}")
        # Round-robin over sections so a document's queries are spread across its sections.
        per_section: dict[str, list[_Rendered]] = {}
        for r in doc.facts.values():
            per_section.setdefault(r.section, []).append(r)
        order = list(per_section)
        rng.shuffle(order)
        for facts in per_section.values():
            rng.shuffle(facts)
        chosen: list[_Rendered] = []
        while len(chosen) < LEXICAL_PER_DOC + PARAPHRASE_PER_DOC:
            for heading in order:
                if per_section[heading] and len(chosen) < LEXICAL_PER_DOC + PARAPHRASE_PER_DOC:
                    chosen.append(per_section[heading].pop())
        kinds = ["lexical"] * LEXICAL_PER_DOC + ["paraphrase"] * PARAPHRASE_PER_DOC
        rng.shuffle(kinds)
        for r, kind in zip(chosen, kinds, strict=True):
            text = _pick_query(rng, r, kind, _entities(doc))
            q = {"query": text, "relevant": _relevance(doc, r), "kind": kind}
            out.append((q, {"sentences": [r.sentence], "entities": _entities(doc)}))
    return out


def _entities(doc: _Doc) -> list[str]:
    """Names a query may legitimately share with its answer: the entity and the parties or brands behind it."""
    return [doc.ctx[k] for k in ("ref", "name", "brand", "bank", "party", "counterparty") if k in doc.ctx]


def _pick_query(rng: random.Random, r: _Rendered, kind: str, entities: list[str]) -> str:
    """A template of the requested kind that keeps its promise for the sentence variant actually rendered.

    Lexical must share at least two content words with the answer, paraphrase none; raising instead of
    falling back keeps a badly worded template from slipping in unnoticed.
    """
    templates = r.fact.lex if kind == "lexical" else r.fact.para
    texts = [_fmt(t, r.ctx) for t in templates]
    if kind == "lexical":
        fits = [t for t in texts if len(shared(t, r.sentence, entities)) >= 2]
    else:
        fits = [t for t in texts if not shared(t, r.sentence, entities)]
    if not fits:
        raise ValueError(f"no {kind} template fits {r.fact.key}: {r.sentence!r}")
    return rng.choice(fits)


# Topics are noun phrases or wh-clauses ("when online check-in opens"); these frames read well with both.
SAME_DOC = (
    "What does the documentation for {ref} say about {t1}, and about {t2}?",
    "I need to know about {t1} and {t2} for {ref}.",
    "Summarise {t1} and {t2} for {ref}.",
    "For {ref}, tell me about {t1} and also about {t2}.",
)
CROSS_DOC = (
    "What do {a} and {b} each say about {t}?",
    "Compare {t} for {a} and {b}.",
    "How do {a} and {b} differ regarding {t}?",
)


def _multi_queries(docs: list[_Doc]) -> list[tuple[dict, dict]]:
    rng = random.Random("queries:multi")
    out: list[tuple[dict, dict]] = []
    seen: set[tuple[str, ...]] = set()
    by_family: dict[str, list[_Doc]] = {}
    for doc in docs:
        by_family.setdefault(doc.family.name, []).append(doc)
    families = list(by_family)
    while len(out) < MULTI_QUERIES:
        if len(out) % 2 == 0:
            doc = rng.choice(docs)
            r1, r2 = rng.sample(list(doc.facts.values()), 2)
            if r1.section == r2.section or (doc.key, r1.fact.key, r2.fact.key) in seen:
                continue
            seen.add((doc.key, r1.fact.key, r2.fact.key))
            seen.add((doc.key, r2.fact.key, r1.fact.key))
            t1, t2 = r1.fact.topic.format_map(r1.ctx), r2.fact.topic.format_map(r2.ctx)
            text = _fmt(rng.choice(SAME_DOC), {"ref": doc.ctx["ref"], "t1": t1, "t2": t2})
            rel = _relevance(doc, r1) + _relevance(doc, r2)
            ents = _entities(doc)
            sentences = [r1.sentence, r2.sentence]
        else:
            da, db = rng.sample(by_family[rng.choice(families)], 2)
            # a topic naming a value ("error code E07") would not make sense for the other document
            comparable = [k for k in da.facts if k in db.facts and "{" not in da.facts[k].fact.topic]
            key = rng.choice(comparable)
            if (da.key, db.key, key) in seen:
                continue
            seen.add((da.key, db.key, key))
            seen.add((db.key, da.key, key))
            ra, rb = da.facts[key], db.facts[key]
            text = _fmt(rng.choice(CROSS_DOC), {"a": da.ctx["ref"], "b": db.ctx["ref"], "t": ra.fact.topic})
            rel = _relevance(da, ra) + _relevance(db, rb)
            ents = _entities(da) + _entities(db)
            sentences = [ra.sentence, rb.sentence]
        out.append(({"query": text, "relevant": rel, "kind": "multi"}, {"sentences": sentences, "entities": ents}))
    return out


def _message(role: str, content: str) -> dict[str, str]:
    return {"role": role, "content": content}


def _history() -> tuple[list[dict], dict[str, tuple[int, int, str]]]:
    """All earlier sessions in order, and where each remembered fact is stated."""
    sessions, where = [], {}
    for si, s in enumerate(memories.SESSIONS):
        msgs = [_message(role, text) for role, text in s["messages"]]
        sessions.append({"title": s["title"], "messages": msgs})
        for fact_id, (marker, answer) in s["facts"].items():
            hits = [i for i, m in enumerate(msgs) if marker in m["content"]]
            if len(hits) != 1 or answer not in msgs[hits[0]]["content"]:
                raise ValueError(f"fact {fact_id}: marker {marker!r} must be in exactly one message with {answer!r}")
            where[fact_id] = (si, hits[0], answer)
    return sessions, where


def _pick_sessions(rng: random.Random, target: int | None) -> list[int]:
    """A target session (if any), up to two from the same cluster as distractors, and a few unrelated ones."""
    n_sessions = len(memories.SESSIONS)
    chosen = [] if target is None else [target]
    if target is not None:
        cluster = memories.SESSIONS[target]["cluster"]
        siblings = [i for i in range(n_sessions) if i != target and memories.SESSIONS[i]["cluster"] == cluster]
        chosen += rng.sample(siblings, min(2, len(siblings)))
    others = [i for i in range(n_sessions) if i not in chosen]
    chosen += rng.sample(others, rng.randint(4, 6) - len(chosen))
    return sorted(chosen)


def _memory_conversations(rng: random.Random) -> list[dict]:
    sessions, where = _history()
    out = []
    items = [(f, turns, fu, st, True) for f, turns, fu, st in memories.AMBIGUOUS]
    items += [(f, turns, q, q, False) for f, turns, q in memories.STANDALONE]
    for fact_id, turns, followup, standalone, ambiguous in items:
        si, mi, answer = where[fact_id]
        picked = _pick_sessions(rng, si)
        out.append(
            {
                "earlier_sessions": [sessions[i] for i in picked],
                "current_session": [_message(role, text) for role, text in turns],
                "followup": followup,
                "standalone": standalone,
                "answer_in": {"type": "message", "session_index": picked.index(si), "message_index": mi},
                "answer": answer,
                "ambiguous": ambiguous,
            }
        )
    return out


ENTITY_FOLLOWUPS = ("How about {topic}?", "And what about {topic}?", "What does it say about {topic}?", "And {topic}?")
SECOND_FOLLOWUPS = ("And for the second one?", "What about the other one?", "And the second?")
SECTION_OPENERS = ("I'm reading the {section} section for {ref}.", "I've got {poss} {section} section open.")
SECTION_FOLLOWUPS = ("What does that section say about {topic}?", "What does it say there about {topic}?")


def _doc_conversations(rng: random.Random, docs: list[_Doc], n_ambiguous: int, n_standalone: int) -> list[dict]:
    sessions, _ = _history()
    by_family: dict[str, list[_Doc]] = {}
    for doc in docs:
        by_family.setdefault(doc.family.name, []).append(doc)
    families = list(by_family)
    used: set[tuple[str, str]] = set()
    out: list[dict] = []

    def answer_of(r: _Rendered) -> str:
        return r.fact.answer.format_map(r.ctx)

    def fresh(doc: _Doc, pred=lambda r: True) -> _Rendered | None:
        options = [r for k, r in doc.facts.items() if (doc.key, k) not in used and pred(r)]
        return rng.choice(options) if options else None

    i = 0
    while len(out) < n_ambiguous + n_standalone:
        i += 1
        family = next(f for f in FAMILIES if f.name == families[i % len(families)])
        pattern = "standalone" if len(out) >= n_ambiguous else ("entity", "second", "section")[i % 3]
        doc = rng.choice(by_family[family.name])
        target = fresh(doc)
        if target is None:
            continue
        ref = doc.ctx["ref"]
        if pattern == "second":
            target = fresh(doc, lambda r: "{" not in r.fact.topic)
            others = [d for d in by_family[family.name] if d is not doc and target and target.fact.key in d.facts]
            if target is None or not others:
                continue
            first = rng.choice(others).facts[target.fact.key]
            if answer_of(first) == answer_of(target):
                continue
            pair = family.pair.format(a=first.ctx["ref"], b=ref)
            turns = [
                _message("user", _cap(pair)),
                _message("assistant", "Happy to compare them. What matters most to you?"),
                _message("user", f"Start with {target.fact.topic} for the first one."),
                _message("assistant", first.sentence),
            ]
            followup = rng.choice(SECOND_FOLLOWUPS)
            standalone = _fmt(target.fact.lex[0], target.ctx)
        elif pattern == "section":
            topic = target.fact.topic.format_map(target.ctx)
            poss = f"{ref}'" if ref.endswith("s") else f"{ref}'s"
            opener = _fmt(rng.choice(SECTION_OPENERS), {"section": target.section, "ref": ref, "poss": poss})
            turns = [_message("user", opener), _message("assistant", "Okay, what would you like to check in it?")]
            followup = rng.choice(SECTION_FOLLOWUPS).format(topic=topic)
            standalone = f"What does the {target.section} section for {ref} say about {topic}?"
        else:
            user, assistant = (_fmt(t, doc.ctx) for t in rng.choice(family.openers))
            turns = [_message("user", user), _message("assistant", assistant)]
            if pattern == "entity":
                first = fresh(doc, lambda r, t=target: r.section != t.section)
                if first is None:
                    continue
                turns += [
                    _message("user", _fmt(first.fact.lex[0], first.ctx)),
                    _message("assistant", first.sentence),
                ]
                followup = rng.choice(ENTITY_FOLLOWUPS).format(topic=target.fact.topic.format_map(target.ctx))
                standalone = _fmt(target.fact.lex[0], target.ctx)
            else:
                followup = standalone = _fmt(target.fact.lex[0], target.ctx)
        answer = answer_of(target)
        if any(answer in t["content"] for t in turns):
            continue
        used.add((doc.key, target.fact.key))
        picked = _pick_sessions(rng, None)
        out.append(
            {
                "earlier_sessions": [sessions[j] for j in picked],
                "current_session": turns,
                "followup": followup,
                "standalone": standalone,
                "answer_in": {"type": "document", "doc": doc.key, "section": target.section},
                "answer": answer,
                "ambiguous": pattern != "standalone",
            }
        )
    return out


@cache
def _build() -> _Built:
    docs = [_build_doc(family, entity) for family in FAMILIES for entity in family.entities]

    queries, evidence = [], {}
    for n, (q, ev) in enumerate(_single_queries(docs) + _multi_queries(docs), start=1):
        qid = f"q{n:04d}"
        queries.append({"id": qid, **q})
        evidence[qid] = ev

    rng = random.Random("conversations")
    convs = _memory_conversations(rng)
    n_amb = sum(1 for c in convs if c["ambiguous"])
    convs += _doc_conversations(rng, docs, n_ambiguous=n_amb, n_standalone=len(convs) - n_amb)
    rng.shuffle(convs)
    conversations = [{"id": f"c{n:03d}", **c} for n, c in enumerate(convs, start=1)]
    return _Built(docs=docs, queries=queries, evidence=evidence, conversations=conversations)


def documents() -> list[dict]:
    """Markdown documents: ``{"key", "title", "filename", "text"}``, each with 4-8 ``##`` sections."""
    return [{"key": d.key, "title": d.title, "filename": d.filename, "text": d.text()} for d in _build().docs]


def queries() -> list[dict]:
    """Queries with section-level relevance: ``{"id", "query", "relevant": [{"doc", "section", "grade"}], "kind"}``.

    ``kind`` is "lexical" (shares key words with the answer), "paraphrase" (shares at most the entity name) or
    "multi" (answered by two sections). Grade 2 answers the query; grade 1 is a section that refers to the topic
    without answering it.
    """
    return [dict(q, relevant=[dict(r) for r in q["relevant"]]) for q in _build().queries]


def conversations() -> list[dict]:
    """Follow-up questions in the context of one user's earlier and current sessions.

    Each item: ``{"id", "earlier_sessions": [{"title", "messages"}], "current_session": [messages], "followup",
    "standalone", "answer_in", "answer", "ambiguous"}``. ``answer_in`` is either ``{"type": "message",
    "session_index", "message_index"}`` (into ``earlier_sessions``) or ``{"type": "document", "doc", "section"}``.
    ``answer`` is a short string found verbatim at that location. When ``ambiguous`` is false the follow-up
    already stands alone and ``standalone`` equals it.
    """
    return copy.deepcopy(_build().conversations)


def evidence() -> dict[str, dict]:
    """For each query id, the sentences that answer it and the entity names it may share with them.

    Not needed for scoring retrieval; it lets ``check.py`` verify that paraphrase queries really avoid the
    answer's wording, and can serve answer-level evaluation.
    """
    return {
        k: {"sentences": list(v["sentences"]), "entities": list(v["entities"])} for k, v in _build().evidence.items()
    }


def section_texts() -> dict[tuple[str, str], str]:
    """``(doc key, heading) -> section body``, parsed back from the Markdown so labels are checked against it."""
    out = {}
    for d in documents():
        for heading, body in re.findall(r"^## ([^\n]+)\n\n(.*?)(?=^## |\Z)", d["text"], flags=re.M | re.S):
            out[(d["key"], heading)] = body.strip()
    return out
