"""Signal-gated query rewriting.

A follow-up like "what was its deadline?" retrieves nothing useful alone. A cheap detector looks for
the signals of such a question: pronouns and demonstratives with no antecedent in the query, elliptic
openings ("and for Germany?"), very short follow-ups, and references to "the document" or "that
section". Standalone queries pay nothing. When a signal fires and the session has context, the query
is rewritten: by the LLM when one is configured, else by a built-in resolver that substitutes from
the session's working set and its last turn. Any failure leaves the original query.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from foundation.ai import extractive

logger = logging.getLogger(__name__)

_APOSTROPHES = str.maketrans({"\u2019": "'"})
_WORD = re.compile(r"[A-Za-z][A-Za-z0-9'\u2019-]*|\d+")
PRONOUNS = frozenset(
    {"it", "its", "it's", "itself", "they", "them", "their", "theirs", "themselves"}
    | {"he", "him", "his", "she", "her", "hers", "one", "ones"}
)
DEMONSTRATIVES = frozenset({"this", "that", "these", "those"})
# A question about the person asking, as a whole ("what do you know about me?", "who am I?"): what is
# remembered of them answers it, whatever its words, so it shares none of them, and it follows on from
# nothing said before it (the manual the last turns quoted says nothing of them).
_ABOUT_OWNER = re.compile(
    r"\b(?:about|of) (?:me|myself)\b|\bwho am i\b|\bwhat (?:have|did) i (?:tell|told|say|said|mention)"
    r"|\b(?:describe|introduce) (?:me|myself)\b",
    re.IGNORECASE,
)
# What the detector calls a reference to the document itself ("what does it say about...").
_DOCUMENT_ITSELF = "it (the document)"
# Nouns that, after "the", "this" or "that", point into the conversation rather than the world.
_DOCUMENT_NOUNS = frozenset({"document", "doc", "file", "paper", "pdf", "section", "chapter", "report"})
REFERENCE_NOUNS = _DOCUMENT_NOUNS | {
    *("docs", "documents", "files", "sections", "page", "pages", "attachment", "article", "part", "paragraph"),
    *("table", "clause", "one", "ones", "option", "options", "point", "points", "step", "steps", "item", "items"),
    *("thing", "things", "former", "latter", "above"),
}
_ORDINALS = r"(?:first|second|third|fourth|fifth|last|previous|other|same|next|former|latter)"
_ORDINAL_REFERENCE = re.compile(rf"\b(?:the|that|this)\s+{_ORDINALS}(?:\s+one|\s+\w+)?\b", re.IGNORECASE)
_ELLIPSIS_START = re.compile(
    r"^\s*(?:and|or|but|also|so|then|what about|how about|same for|same with|what if|why not|and what about|"
    r"any other|anything else|more on|else|instead)\b",
    re.IGNORECASE,
)
_VERBS_AFTER_BARE_DEMONSTRATIVE = frozenset(
    {"is", "was", "are", "were", "does", "do", "did", "mean", "means", "say", "says", "work", "works"}
)
SHORT_FOLLOWUP_WORDS = 3
MAX_REWRITE_CHARS = 1000


@dataclass
class RewriteContext:
    """What the session knows, in plain data: its last turns, its summary and its working set."""

    recent_turns: Sequence[tuple[str, str]] = ()
    summary: str = ""
    resolved_terms: dict[str, str] = field(default_factory=dict)
    active_documents: Sequence[tuple[str, str]] = ()  # (uri, title), most recent first
    active_sections: Sequence[tuple[str, str]] = ()

    @property
    def empty(self) -> bool:
        return not (self.recent_turns or self.summary.strip() or self.active_documents or self.resolved_terms)


@dataclass
class Rewrite:
    """The decision and its outcome, as recorded in the trace and returned in the query plan."""

    query: str
    rewritten: bool = False
    reason: str = ""
    signals: list[str] = field(default_factory=list)
    method: str = ""
    resolved_terms: dict[str, str] = field(default_factory=dict)
    error: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "rewritten": self.rewritten,
            "reason": self.reason,
            "signals": self.signals,
            "method": self.method,
            "resolved_terms": self.resolved_terms,
            **({"error": self.error} if self.error else {}),
        }


def _content_words(words: Sequence[str]) -> list[str]:
    return [w for w in words if w.lower() not in extractive.STOPWORDS and len(w) > 2 and w.lower() not in PRONOUNS]


_DETERMINERS = frozenset(
    {"the", "a", "an", "my", "our", "your", "their", "his", "her", "this", "that", "these", "those"}
)


_NOT_NAMES = frozenset(
    {"i", "what", "which", "when", "where", "who", "whom", "whose", "why", "how", "and", "or", "but"}
)


def _names_something(words: Sequence[str], index: int, end: int | None = None) -> bool:
    """Whether ``words[index]`` (with the word after it) names something a pronoun can refer to: a noun
    introduced by a determiner ("the retention policy ... change it"), a name ("Kafka ... is it fast")
    or a technical token. Verbs and adverbs ("how often should I descale it") do not."""
    end = len(words) if end is None else end
    word = words[index]
    lowered = word.lower()
    if lowered in _DETERMINERS and index + 1 < end and _content_words(words[index + 1 : index + 2]):
        return True
    if index > 0 and word[0].isupper() and lowered not in PRONOUNS | _NOT_NAMES:
        return True
    return any(ch.isdigit() for ch in word) or "_" in word or "." in word.strip(".")


def _antecedent_flags(words: Sequence[str]) -> list[bool]:
    """For each position, whether the words before it hold an antecedent (computed in one pass: a
    4,000-character query must not cost a quadratic scan)."""
    flags, found = [], False
    for index in range(len(words)):
        # A determiner counts once the noun after it is in: "the policy" names something at "policy".
        if index >= 2 and _names_something(words, index - 2, index):
            found = True
        if index >= 1 and _names_something(words, index - 1, index):
            found = True
        flags.append(found)
    return flags


def _has_antecedent(words: Sequence[str]) -> bool:
    return any(_names_something(words, index) for index in range(len(words)))


_INTERJECTION = re.compile(
    r"^\s*(?:[^.!?]{1,30}?[.!?]|(?:yes|no|ok|okay|right|sure|thanks|great)\b,?)\s+(?=\S)", re.IGNORECASE
)
_AFTER_BARE_DEMONSTRATIVE = _VERBS_AFTER_BARE_DEMONSTRATIVE | {
    "again",
    "exactly",
    "now",
    "then",
    "there",
    "here",
    "too",
}
_BEFORE_SUBJECT_DEMONSTRATIVE = frozenset({"is", "was", "are", "were", "does", "did", "about", "of", "with", "for"})
_EXISTENTIAL_THERE = frozenset({"is", "are", "was", "were", "isn't", "aren't", "a", "an", "any", "some"})


def _core(query: str) -> str:
    """The question without a short opening reply ("Yes.", "I think so.", "Probably."): a follow-up
    often answers the assistant before it asks, and that reply is not where its subject is."""
    previous = None
    while previous != query:
        previous = query
        match = _INTERJECTION.match(query)
        if match and len(match.group(0).split()) <= 4 and len(query) > len(match.group(0)) + 3:
            query = query[match.end() :]
    return query


_ABOUT_WH_WORDS = frozenset({"what", "what's", "where", "where's", "when", "when's", "who", "who's", "which"})
_FIRST_PERSON = frozenset({"i", "i'm", "i've", "i'd", "i'll", "me", "my", "mine", "myself"})
# Verbs of choosing and doing: "which should I pick?", "what do I press?" choose among what the last
# turns offered, so they say nothing of their own.
_GENERIC_VERBS = frozenset(
    {"pick", "choose", "select", "use", "try", "buy", "get", "take", "need", "want", "press", "click", "type"}
    | {"enter", "set", "change", "put", "run", "install", "open", "check", "read", "follow", "start", "go"}
)


def asks_about_owner(text: str) -> bool:
    """Whether a question asks what is known of the person asking, as a whole."""
    return bool(_ABOUT_OWNER.search(text))


def _asks_about_speaker(lowered: Sequence[str]) -> bool:
    """Whether a short question asks something whole about the person asking: a wh-word other than "how"
    or "why", the first person and a word of its own ("where do I live?", "what can't I eat?", "when is my
    flight?"). It is about them, not about the last turn, and their memories answer it: the session's
    names added to it ("... (Lisbon; Priya)") only pull their home above their allergy."""
    own = [w for w in lowered if w not in _FIRST_PERSON and w not in _GENERIC_VERBS]
    return (
        bool(lowered)
        and lowered[0] in _ABOUT_WH_WORDS
        and any(word in _FIRST_PERSON for word in lowered)
        and bool(_content_words(own))
    )


def detect_signals(query: str) -> list[str]:
    """The signals that ``query`` leans on earlier turns. Empty for a standalone question."""
    query = _core(query)
    words = _WORD.findall(query)
    lowered = [w.lower().translate(_APOSTROPHES) for w in words]
    signals: list[str] = []
    antecedents = _antecedent_flags(words)
    for index, word in enumerate(lowered):
        antecedent = antecedents[index]
        previous = lowered[index - 1] if index else ""
        following = lowered[index + 1] if index + 1 < len(lowered) else ""
        if word in PRONOUNS:
            if word in ("one", "ones") and previous not in ("the", "that", "this", "which"):
                continue  # "one of the options" is a number, not a reference
            if word == "it" and following in ("say", "says", "said", "mention", "mentions"):
                signals.append(f"reference:{_DOCUMENT_ITSELF}")
            elif not antecedent:
                signals.append(f"pronoun:{word}")
        elif word in DEMONSTRATIVES:
            if following in REFERENCE_NOUNS:
                signals.append(f"reference:{word} {following}")
            elif not antecedent and (
                not following or following in _AFTER_BARE_DEMONSTRATIVE or previous in _BEFORE_SUBJECT_DEMONSTRATIVE
            ):
                signals.append(f"demonstrative:{word}")
        elif word == "there" and previous not in _EXISTENTIAL_THERE and following not in _EXISTENTIAL_THERE:
            if not antecedent:
                signals.append("place:there")
        elif word == "the" and following in _DOCUMENT_NOUNS:
            signals.append(f"reference:the {following}")
    if _ORDINAL_REFERENCE.search(query):
        signals.append("ordinal:" + _ORDINAL_REFERENCE.search(query).group(0).lower())
    if _ELLIPSIS_START.match(query):
        signals.append("ellipsis:" + _ELLIPSIS_START.match(query).group(0).strip().lower())
    # "why?", "more detail please": too little to search on. "capital of France?" names its subject, and
    # "what can't I eat?" its speaker.
    short = len(_content_words(words)) <= SHORT_FOLLOWUP_WORDS and len(words) <= 6
    if short and not _has_antecedent(words) and not _asks_about_speaker(lowered) and not asks_about_owner(query):
        signals.append("short_followup")
    return list(dict.fromkeys(signals))


def decide(query: str, context: RewriteContext, *, enabled: bool) -> Rewrite:
    """Whether to rewrite, and why; the rewrite itself is ``resolve`` or the LLM's."""
    if not enabled:
        return Rewrite(query=query, reason="query rewriting is disabled (ENABLE_QUERY_REWRITING)")
    signals = detect_signals(query)
    if not signals:
        return Rewrite(query=query, reason="standalone query: no follow-up signal")
    if context.empty:
        return Rewrite(query=query, signals=signals, reason="follow-up signals but no session context to resolve them")
    return Rewrite(query=query, signals=signals, reason="follow-up signals: " + ", ".join(signals))


def _noun_phrases(text: str) -> list[tuple[float, str]]:
    """Runs of up to four content words, scored as likely subjects: named (capitalised past the start of
    the sentence), introduced by a determiner, and longer runs score higher; later ones break ties,
    since a question's object usually comes last."""
    found: list[tuple[float, str]] = []
    for sentence in extractive.split_sentences(text[:4000]):
        tokens = re.findall(r"[A-Za-z0-9][\w'.-]*[\w]|[A-Za-z0-9]|[^\w\s]", sentence)
        # Each run: its words, whether a determiner introduced it, whether it starts the sentence, and
        # whether it owns what follows ("Maya's recital": the recital is what "it" points back to).
        runs: list[list] = [[[], False, True, False]]
        for position, token in enumerate(tokens):
            lowered = token.lower()
            is_content = (
                token[0].isalnum()
                and lowered not in extractive.STOPWORDS
                and lowered not in PRONOUNS
                and len(token) > 2
                and not (position == 0 and (not token[0].isupper() or lowered in _LEADING_VERBS))
                and not _looks_like_verb(token, tokens[position - 1] if position else "")
            )
            possessive = lowered.endswith(("'s", "\u2019s"))
            if is_content and possessive:
                # "the Cardamom Rice Pudding's Ingredients section": the owner is a phrase of its own.
                runs[-1][0].append(token[:-2])
                runs[-1][3] = True
                runs.append([[], True, False, False])
            elif is_content:
                runs[-1][0].append(token)
            else:
                runs.append([[], lowered in _DETERMINERS, False, False])
        for words, introduced, at_start, owner in runs:
            if words:
                named = any(word[0].isupper() for word in words[1:]) or (words[0][0].isupper() and not at_start)
                score = len(words) + (2 if named else 0) + (1.5 if introduced else 0) - (1.5 if owner else 0)
                found.append((score, " ".join(words[-4:])))
    return found


_VERBS = frozenset(
    {"want", "wants", "wanted", "need", "needs", "needed", "ask", "asks", "asked", "give", "gives", "gave"}
    | {"get", "gets", "got", "open", "say", "says", "said", "think", "thinks", "thought", "know", "knows"}
    | {"like", "likes", "use", "uses", "used", "make", "makes", "made", "take", "takes", "took", "goes"}
    | {"went", "come", "comes", "came", "book", "ship", "land", "lands", "start", "starts", "try", "tries"}
)


_AUXILIARIES = frozenset(
    {"i'm", "we're", "you're", "they're", "he's", "she's", "am", "is", "are", "was", "were", "be", "been"}
    | {"i", "we", "you", "they", "he", "she", "not", "just", "still", "also"}
)


def _looks_like_verb(token: str, previous: str) -> bool:
    """A guess without a tagger: listed verbs, "-ing"/"-ed" forms after a subject or auxiliary
    ("I'm booking", "we shipped"; but "the staging database" and "billing" stay nouns), and the word
    after "to" ("to confirm")."""
    lowered, before = token.lower(), previous.lower().replace("\u2019", "'")
    if token[0].isupper():
        return False
    if lowered in _VERBS or before == "to":
        return True
    return len(lowered) > 4 and lowered.endswith(("ing", "ed")) and before in _AUXILIARIES


_LEADING_VERBS = frozenset({"tell", "show", "explain", "describe", "give", "list", "find", "help", "compare"})


def salient_phrases(turns: Sequence[tuple[str, str]], *, limit: int = 3) -> list[str]:
    """The subjects of the last turn: those of the user's last message first, then of the answer."""
    phrases: list[str] = []
    for role in ("user", "assistant"):
        last = next((content for r, content in reversed(turns) if r == role), "")
        ranked = sorted(enumerate(_noun_phrases(last)), key=lambda item: (-item[1][0], -item[0]))
        for _, (_, phrase) in ranked:
            if phrase.lower() not in {p.lower() for p in phrases}:
                phrases.append(phrase)
            if len(phrases) >= limit:
                return phrases
    return phrases


_PEOPLE = frozenset(
    {"teacher", "manager", "doctor", "dentist", "mother", "father", "mum", "dad", "sister", "brother", "wife"}
    | {"husband", "partner", "son", "daughter", "friend", "boss", "colleague", "lawyer", "coach", "nurse"}
)


def _entity(phrase: str) -> tuple[str, str]:
    """A subject split into the thing named and the aspect asked about: "Nimbus router warranty" is
    the Nimbus router ("how do I reset it?") with its warranty kept as context. A phrase that is all
    name ("Smoked Paprika Chickpea Stew") or has no name ("billing migration") stays whole."""
    words = phrase.split()
    named = 0
    while named < len(words) and words[named][0].isupper():
        named += 1
    if named > 0 and named + 1 < len(words):
        return " ".join(words[: named + 1]), " ".join(words[named + 1 :])
    return phrase, ""


def _person(phrases: Sequence[str]) -> str:
    """The first subject that is a person: a role ("piano teacher") or a bare name ("Maya")."""
    for phrase in phrases:
        words = phrase.split()
        if words[-1].lower() in _PEOPLE or (len(words) <= 2 and all(w[0].isupper() for w in words)):
            return phrase
    return ""


# A product manual's title is the product and the words for the manual ("Aurora K3 Kettle User Manual
# v2"): "it" in "is it under warranty?" is the kettle, not the manual.
_MANUAL_WORDS = frozenset({"manual", "guide", "instructions", "booklet", "leaflet"})
_MANUAL_MODIFIERS = frozenset(
    {"user", "users", "user's", "owner", "owners", "owner's", "quick", "start", "quick-start", "reference"}
    | {"instruction", "installation", "operating", "service", "product", "setup", "care"}
)
_VERSION = re.compile(r"^v?\d+(?:\.\d+)*$", re.IGNORECASE)


def _thing_of(title: str) -> str:
    """What a product manual's title names ("Aurora K3 Kettle User Manual" -> "Aurora K3 Kettle"); any
    other title, and one that names nothing but the manual ("User Guide"), whole."""
    words = title.split()
    while words and _VERSION.match(words[-1]):
        words.pop()
    if not words or words[-1].lower() not in _MANUAL_WORDS:
        return title
    words.pop()
    while words and words[-1].lower() in _MANUAL_MODIFIERS:
        words.pop()
    return " ".join(words) or title


def _replace_word(text: str, word: str, replacement: str) -> str:
    # A function, not a template: a title may hold backslashes ("C:\\dev"), which re.sub would parse.
    return re.sub(rf"\b{re.escape(word)}\b", lambda _match: replacement, text, count=1, flags=re.IGNORECASE)


# An elliptic follow-up is completed with at most this many phrases of the user's own last questions.
ASKED_PHRASES = 2
# Pronouns that point to a person rather than a thing, and those that say "belonging to".
_PERSONAL_PRONOUNS = frozenset({"he", "him", "his", "she", "her", "hers"})
_POSSESSIVE_PRONOUNS = frozenset({"its", "their", "his", "her"})
# A reference with one of these nouns means a part of the active document, when one is known.
_PART_NOUNS = frozenset({"section", "chapter", "part", "paragraph", "clause"})


@dataclass
class _Resolving:
    """A follow-up as the built-in resolver works on it: the query so far, what the session offers to
    resolve it with (the last turn's subject, its salient phrases, the user's own last question), the
    words resolved and the phrases to add."""

    query: str
    subject: str
    phrases: list[str]
    asked: list[str]
    resolved: dict[str, str] = field(default_factory=dict)
    extra: list[str] = field(default_factory=list)

    def substitute(self, word: str, replacement: str, *, meaning: str) -> None:
        self.query = _replace_word(self.query, word, replacement)
        self.resolved[word] = meaning


def resolve(decision: Rewrite, context: RewriteContext) -> Rewrite:
    """The built-in resolver: substitutes the last turn's subject for pronouns, the active document or
    section for references to them, and adds the topic to elliptic follow-ups."""
    work = _resolving(decision.query, context)
    for signal in decision.signals:
        kind, _, words = signal.partition(":")
        if kind == "pronoun":
            _resolve_pronoun(work, words, context)
        elif kind == "demonstrative":
            target = work.subject or context.resolved_terms.get(words, "")
            if target:
                work.substitute(words, target, meaning=target)
        elif kind == "reference":
            _resolve_reference(work, words, context)
        elif kind == "place" and work.subject:
            work.extra.append(work.subject)
        elif kind in ("ellipsis", "ordinal", "short_followup"):
            work.extra += work.asked
    work.extra += _terms_still_meant(work.query, context)
    query = _with_additions(work.query, work.extra)
    if query == decision.query:
        decision.reason += "; nothing in the session resolved them"
        return decision
    decision.query = query
    decision.rewritten = True
    decision.method = "working_set"
    decision.resolved_terms = work.resolved
    return decision


def _resolving(query: str, context: RewriteContext) -> _Resolving:
    """What the session offers to resolve ``query`` with."""
    phrases = salient_phrases(context.recent_turns)
    # Elliptic follow-ups continue the user's own last question, not the answer's wording.
    asked = salient_phrases([t for t in context.recent_turns if t[0] == "user"], limit=ASKED_PHRASES)
    subject, aspect = _entity(phrases[0]) if phrases else ("", "")
    # A session that has only searched so far has no turns to take a subject from, but it has the
    # documents its searches returned: "and how long is it under warranty?" is about the one in use.
    in_use = _thing_of(context.active_documents[0][1]) if context.active_documents else ""
    return _Resolving(
        query=query,
        subject=subject or in_use,
        phrases=phrases,
        asked=asked or ([in_use] if in_use else []),
        extra=[aspect] if aspect else [],
    )


def _resolve_pronoun(work: _Resolving, pronoun: str, context: RewriteContext) -> None:
    """A person's pronoun becomes the person talked about; any other, the subject ("its" its possessive)."""
    person = _person(work.phrases) if pronoun in _PERSONAL_PRONOUNS else ""
    target = person or work.subject or context.resolved_terms.get(pronoun, "")
    if target:
        replacement = f"{target}'s" if pronoun in _POSSESSIVE_PRONOUNS else target
        work.substitute(pronoun, replacement, meaning=target)


def _resolve_reference(work: _Resolving, words: str, context: RewriteContext) -> None:
    """ "The document" or "that section" names the active one (a section when one is known); without one,
    the subject stands for the document, or is added as a topic."""
    document_reference = words == _DOCUMENT_ITSELF
    noun = "document" if document_reference else words.split()[-1]
    pool = context.active_sections if noun in _PART_NOUNS else ()
    pool = pool or context.active_documents
    if pool and pool[0][1]:
        title = pool[0][1]
        if document_reference:
            work.substitute("it", f"the {title}", meaning=title)
        else:
            work.substitute(words, f"{words} ({title})", meaning=title)
    elif work.subject:
        if document_reference:
            work.substitute("it", work.subject, meaning=work.subject)
        else:
            work.extra.append(work.subject)


def _terms_still_meant(query: str, context: RewriteContext) -> list[str]:
    """What the session resolved earlier terms of the query to, when the query does not already say it."""
    meant = []
    for term, meaning in context.resolved_terms.items():
        mentioned = re.search(rf"\b{re.escape(term)}\b", query, re.IGNORECASE)
        if mentioned and term not in PRONOUNS | DEMONSTRATIVES and meaning.lower() not in query.lower():
            meant.append(meaning)
    return meant


def _with_additions(query: str, extra: list[str]) -> str:
    """``query`` with the phrases it needs added in brackets, once each."""
    # A phrase whose every word is already in the query (or in an earlier addition) adds nothing.
    seen = set(re.findall(r"\w+", query.lower()))
    kept = []
    for phrase in dict.fromkeys(extra):
        words = set(re.findall(r"\w+", phrase.lower()))
        if words and not words <= seen:
            kept.append(phrase)
            seen |= words
    return f"{query.rstrip()} ({'; '.join(kept)})" if kept else query


def llm_prompt(query: str, context: RewriteContext) -> list[dict[str, str]]:
    turns = "\n".join(f"{role}: {content[:600]}" for role, content in list(context.recent_turns)[-6:])
    documents = ", ".join(title for _, title in context.active_documents[:3] if title)
    return [
        {
            "role": "system",
            "content": (
                "You rewrite a user's follow-up question into a standalone search query. Resolve pronouns, "
                "references and ellipsis from the conversation. Keep the user's language and intent, add nothing "
                "else. Answer with the rewritten query only, on one line."
            ),
        },
        {
            "role": "user",
            "content": (
                (f"Conversation summary:\n{context.summary[:2000]}\n\n" if context.summary.strip() else "")
                + (f"Documents in use: {documents}\n\n" if documents else "")
                + f"Recent turns:\n{turns}\n\nFollow-up question: {query}\n\nStandalone query:"
            ),
        },
    ]


def rewrite_with_llm(decision: Rewrite, context: RewriteContext, *, engine: Any, owner_id: int | None) -> Rewrite:
    """The LLM's rewrite; on any failure, the built-in resolver's (which at worst keeps the query)."""
    try:
        text = engine.complete(llm_prompt(decision.query, context), purpose="query_rewrite", owner_id=owner_id)
        text = text.strip().strip('"').strip().splitlines()[0].strip() if text and text.strip() else ""
        if not text:
            raise ValueError("the model answered with nothing")
        if len(text) > max(MAX_REWRITE_CHARS, 4 * len(decision.query)):
            raise ValueError("the model's rewrite is implausibly long")
    except Exception as exc:  # any provider or parsing error: the search must still run
        logger.warning("query rewrite by LLM failed: %s", exc)
        fallback = resolve(decision, context)
        fallback.error = f"LLM rewrite failed ({type(exc).__name__}: {str(exc)[:200]}); used the built-in resolver"
        return fallback
    if text.strip().lower() == decision.query.strip().lower():
        decision.reason += "; the model kept the query as it was"
        decision.method = "llm"
        return decision
    decision.query = text
    decision.rewritten = True
    decision.method = "llm"
    return decision
