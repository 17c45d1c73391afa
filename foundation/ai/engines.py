"""Text engines behind one interface: the built-in extractive engine, or an LLM through litellm.

The LLM engine falls back to the extractive one for any call that fails or answers with something
unusable, so summaries, overviews and memories are always produced; the failure is recorded.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import json
import re
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from django.conf import settings

from foundation.accounting import record_call
from foundation.ai import extractive, summaries
from foundation.ai import memories as memory_patterns
from foundation.ai.llm import (
    OpenAIRoute,
    litellm_module,
    openai_astream,
    openai_clients_warm,
    openai_route,
    openai_stream,
)
from foundation.ai.memories import MemoryCandidate
from foundation.ai.tokens import estimate_tokens


class IncompleteAnswer(RuntimeError):
    """A streamed answer that stopped without the provider saying it was finished."""


@dataclass(frozen=True)
class Turn:
    role: str
    content: str
    # Text the product itself put into the conversation (quoted passages, injected context). It is never
    # summarised as if someone had said it, but a derived reply still shows that a question was answered.
    derived: bool = False


def spoken(turns: Sequence[Turn]) -> list[Turn]:
    """The turns people (or a generating model) actually said."""
    return [t for t in turns if not t.derived]


ARCHIVE_ABSTRACT_WORDS = 30


@dataclass
class Overview:
    """The L1 overview of an archive; ``abstract`` is its L0 line, derived without another call."""

    topic: str = ""
    intent: str = ""
    outcome: str = ""
    open_items: list[str] = field(default_factory=list)
    key_facts: list[tuple[str, str]] = field(default_factory=list)  # (who said it, what)

    def as_text(self) -> str:
        lines = [f"Topic: {self.topic or '-'}", f"Intent: {self.intent or '-'}", f"Outcome: {self.outcome or '-'}"]
        lines.append("Open items:" + ("" if self.open_items else " none"))
        lines += [f"- {item}" for item in self.open_items]
        lines.append("Key facts:" + ("" if self.key_facts else " none"))
        lines += [f"- {who}: {fact}" for who, fact in self.key_facts]
        return "\n".join(lines)

    def as_dict(self) -> dict:
        return {
            "topic": self.topic,
            "intent": self.intent,
            "outcome": self.outcome,
            "open_items": list(self.open_items),
            "key_facts": [{"who": who, "fact": fact} for who, fact in self.key_facts],
        }

    @property
    def abstract(self) -> str:
        """One line: what the conversation was about and what came of it (or what was wanted), the
        detail cut at a clause rather than mid-phrase when the line would be too long."""
        topic = " ".join(self.topic.split())
        room = ARCHIVE_ABSTRACT_WORDS - len(topic.split())
        details = [" ".join(text.split()) for text in (self.outcome, self.intent) if text.strip()]
        # The outcome says most; the request stands in when the outcome would not fit whole.
        detail = next((d for d in details if len(d.split()) <= room), details[0] if details else "")
        if not topic:
            return extractive.shorten(detail, ARCHIVE_ABSTRACT_WORDS)
        return f"{topic}: {extractive.shorten(detail, max(room, 1))}" if detail else topic


class TextEngine(Protocol):
    """What every engine can do. ``generates`` says whether it can also write free text (``complete``
    and ``stream``, for answers and rewrites): an LLM can; the extractive engine only quotes."""

    name: str
    backend: str
    generates: bool

    def overview(self, turns: Sequence[Turn], *, owner_id: int | None = None) -> Overview: ...

    def summarize(
        self, turns: Sequence[Turn], *, previous: str, max_words: int, owner_id: int | None = None
    ) -> str: ...

    def extract_memories(
        self, turns: Sequence[Turn], *, owner_id: int | None = None, known_keys: Sequence[tuple[str, str]] = ()
    ) -> list[MemoryCandidate]: ...

    def describe(self, texts: Sequence[str], *, max_words: int, owner_id: int | None = None) -> str: ...

    def warm(self) -> None:
        """Loads what the engine's first call would load, without calling any model."""


@runtime_checkable
class StreamingEngine(Protocol):
    """An engine that can also stream an answer on an event loop (``LiteLLMEngine.astream``)."""

    def astream(self, messages: list[dict], *, call: StreamedCall) -> AsyncIterator[str]: ...


DESCRIBE_INPUT_CHARS = 24_000


ABSTRACT_WORDS = 25


def abstract_of(overview: str, *, title: str = "", opening: str = "", max_words: int = ABSTRACT_WORDS) -> str:
    """An L0 line from an L1 overview, without another model call: its most informative statement
    (not an instruction, a question or markup), shortened.

    With a ``title`` (a section's or document's), the line says what the node is, then that statement:
    "Warranty: The K2 is covered for two years." A document's ``opening``, the statement its text
    begins with, says best what it covers ("This manual covers the Crema Duo espresso machine.") and
    stands in for the overview's.
    """
    name = extractive.abstract_title(title)
    statement = extractive.shorten(opening, max_words) if opening else ""
    statement = statement or extractive.lead_statement(overview, max_words=max_words)
    if not name:
        return statement
    if not statement or extractive.heading_words(statement).lower() == name.lower():
        return name
    return f"{name}: {statement}"


def _pairs(turns: Sequence[Turn]) -> list[tuple[str, str]]:
    return [(t.role, t.content) for t in spoken(turns)]


@dataclass
class StreamedCall:
    """A model call streamed on an event loop (``LiteLLMEngine.astream``), recorded afterwards from a
    thread: recording writes to the database, which an event loop must not do. ``fields`` are set once
    the stream ends, however it ends."""

    engine: Any
    purpose: str
    owner_id: int | None
    session_id: Any = None
    started: float = field(default_factory=time.perf_counter)
    fields: dict | None = None

    def record(self) -> None:
        """Records the call, once it has ended (nothing before)."""
        if self.fields is not None:
            _record_generation(
                self.engine, self.purpose, self.started, self.owner_id, session_id=self.session_id, **self.fields
            )
            self.fields = None


def _streamed(messages: list[dict], produced: list[str], error: str) -> dict:
    """What a streamed call is recorded with: its tokens each way, and why it failed (a cancelled answer
    did not fail)."""
    return {
        "input_tokens": sum(estimate_tokens(str(m.get("content", ""))) for m in messages),
        "output_tokens": estimate_tokens("".join(produced)),
        "error": error if error != "cancelled" else "",
    }


INCOMPLETE_ANSWER = "the model's stream ended before the answer was complete"


class _Ending:
    """Reads the text of an OpenAI-API stream's chunks, noting whether the provider said the answer was
    finished: a stream that ends without saying so was cut off."""

    def __init__(self) -> None:
        self.said = False

    def text(self, chunk: Any) -> str:
        choices = chunk.get("choices") if isinstance(chunk, dict) else None
        if not choices:
            return ""
        choice = choices[0]
        self.said = self.said or bool(choice.get("finish_reason"))
        return (choice.get("delta") or {}).get("content") or ""

    def check(self) -> None:
        if not self.said:
            raise IncompleteAnswer(INCOMPLETE_ANSWER)


def _openai_pieces(messages: list[dict], route: OpenAIRoute) -> Iterator[str]:
    """An answer streamed from an OpenAI-API provider as its pieces of text."""
    ending = _Ending()
    with openai_stream(route, messages=messages, temperature=0.2) as stream:
        for chunk in stream:
            if piece := ending.text(chunk):
                yield piece
    ending.check()


async def _openai_apieces(messages: list[dict], route: OpenAIRoute) -> AsyncIterator[str]:
    """``_openai_pieces`` on an event loop."""
    ending = _Ending()
    async with await openai_astream(route, messages=messages, temperature=0.2) as stream:
        async for chunk in stream:
            if piece := ending.text(chunk):
                yield piece
    ending.check()


def _record_generation(engine: TextEngine, purpose: str, started: float, owner_id: int | None, **fields) -> None:
    record_call(
        kind="generation",
        purpose=purpose,
        backend=engine.backend,
        model=engine.name,
        started=started,
        owner_id=owner_id,
        **fields,
    )


class ExtractiveEngine:
    """Summaries and overviews from the conversation's own sentences; memories from patterns."""

    name = "extractive"
    backend = "extractive"
    generates = False

    def warm(self) -> None:
        """Nothing to load: the engine is plain Python, imported with the rest."""

    def _record(self, purpose: str, started: float, owner_id: int | None, text_in: str, text_out: str) -> None:
        _record_generation(
            self,
            purpose,
            started,
            owner_id,
            input_tokens=estimate_tokens(text_in),
            output_tokens=estimate_tokens(text_out),
        )

    def overview(self, turns: Sequence[Turn], *, owner_id: int | None = None) -> Overview:
        started = time.perf_counter()
        result = build_overview(turns)
        self._record("archive_overview", started, owner_id, "".join(t.content for t in spoken(turns)), result.as_text())
        return result

    def summarize(self, turns: Sequence[Turn], *, previous: str, max_words: int, owner_id: int | None = None) -> str:
        started = time.perf_counter()
        summary = summaries.rolling_summary(_pairs(turns), previous=previous, max_words=max_words)
        self._record("rolling_summary", started, owner_id, previous + "".join(t.content for t in turns), summary)
        return summary

    def describe(self, texts: Sequence[str], *, max_words: int, owner_id: int | None = None) -> str:
        """An overview of a passage (or of a section's parts): its most telling sentences, in order, as
        sentences about the text (its instructions reported, its lists and tables described, no markup)."""
        return extractive.describe_passages(texts, max_words=max_words)

    def extract_memories(
        self, turns: Sequence[Turn], *, owner_id: int | None = None, known_keys: Sequence[tuple[str, str]] = ()
    ) -> list[MemoryCandidate]:
        # ``known_keys`` helps a model reuse keys; the patterns key each subject the same way every time.
        started = time.perf_counter()
        found = memory_patterns.extract(_pairs(turns))
        self._record(
            "memory_extraction",
            started,
            owner_id,
            "".join(t.content for t in turns),
            "".join(c.content for c in found),
        )
        return found


def _answered_questions(turns: Sequence[Turn]) -> set[int]:
    """Indexes (among the spoken turns) of user turns that a derived reply answered: with the built-in
    engine, every chat answer is a quote, so without this every question of a chat would look open."""
    answered: set[int] = set()
    waiting: int | None = None
    index = -1
    for turn in turns:
        if not turn.derived:
            index += 1
            if turn.role == "user":
                waiting = index
            elif turn.role == "assistant":
                waiting = None
        elif turn.role == "assistant" and waiting is not None:
            answered.add(waiting)
            waiting = None
    return answered


# A reply that does not answer: the assistant did not know, or could not help.
_UNSURE = re.compile(
    r"\b(?:i don't know|i do not know|not sure|no idea|i can't|i cannot|i'm unable|i am unable|unable to|"
    r"can't help|cannot help|i don't have|couldn't find|could not find|no information)\b",
    re.IGNORECASE,
)
# A later user turn saying a question no longer stands.
_SETTLED = re.compile(
    r"\b(?:never ?mind|figured it out|found it|sorted(?: it)?(?: out)?|solved it|that worked|it worked|that works|"
    r"works now|working now|all good|no longer need|not needed any ?more|ignore that|forget it|fixed it|"
    r"got it working|resolved)\b",
    re.IGNORECASE,
)
OPEN_ITEMS_MAX = 5


def _is_question(sentence: extractive.Sentence) -> bool:
    return sentence.text.rstrip().endswith("?")


def _answers(reply: Sequence[extractive.Sentence]) -> bool:
    """Whether a reply says something: a statement that is neither a pleasantry nor "I don't know"."""
    return any(
        not _is_question(s) and not extractive.is_pleasantry(s.text) and not _UNSURE.search(s.text) for s in reply
    )


def _shares_a_term(question: extractive.Sentence, reply: Sequence[extractive.Sentence]) -> bool:
    return any(set(question.terms) & set(r.terms) for r in reply)


def _clarifies(reply: Sequence[extractive.Sentence]) -> bool:
    """A reply that asks back before answering ("Sure. What are the dates?")."""
    return bool(reply) and any(_is_question(s) for s in reply) and not _answers(reply)


def _open_questions(sentences: Sequence[extractive.Sentence], answered_turns: set[int]) -> list[extractive.Sentence]:
    """The user's questions still open at the end: not answered by the assistant's next turn (or, when
    that turn asked back, by a later one on its terms; or by any later one on the same terms), nor
    settled by a later user turn ("never mind", "that worked", or a decision on the same terms)."""
    by_turn: dict[int, list[extractive.Sentence]] = {}
    for s in sentences:
        by_turn.setdefault(s.turn, []).append(s)
    role_of = {s.turn: s.role for s in sentences}
    open_ones: list[extractive.Sentence] = []
    asked_back: set[int] = set()  # positions of questions the assistant answered with a question
    for turn in sorted(by_turn):
        said = by_turn[turn]
        if role_of[turn] != "user":
            statements = [a for a in said if not _is_question(a) and not _UNSURE.search(a.text)]
            open_ones = [
                q
                for q in open_ones
                if not any(extractive._overlap(q.terms, a.terms) >= 0.5 for a in said)
                and not (q.position in asked_back and _shares_a_term(q, statements))
            ]
            continue
        for later in said:  # what this turn settles of what was asked before it
            settles = bool(_SETTLED.search(later.text)) and not _is_question(later)
            decides = bool(extractive._DECISION.search(later.text)) and not _is_question(later)
            on_terms = [q for q in open_ones if extractive._overlap(q.terms, later.terms) >= 0.5]
            if settles:
                open_ones = [q for q in open_ones if q not in (on_terms or open_ones[-1:])]
            elif decides and on_terms:
                open_ones = [q for q in open_ones if q not in on_terms]
        asked = [q for q in said if _is_question(q) and not extractive.is_pleasantry(q.text)]
        reply = by_turn.get(turn + 1, []) if role_of.get(turn + 1) == "assistant" else []
        for question in asked:
            if turn in answered_turns:
                continue
            if _answers(reply) and (len(asked) == 1 or _shares_a_term(question, reply)):
                continue
            if _clarifies(reply):
                asked_back.add(question.position)
            open_ones.append(question)
    return open_ones


def _plain(text: str) -> str:
    return " ".join(extractive.plain_text(text).split())


def build_overview(turns: Sequence[Turn]) -> Overview:
    said = spoken(turns)
    sentences = [s for s in extractive.sentences_of(_pairs(said)) if s.role in ("user", "assistant")]
    if not sentences:
        return Overview()
    weights = extractive.term_weights(sentences)
    user = [s for s in sentences if s.role == "user" and not extractive.is_pleasantry(s.text)]
    assistant = [s for s in sentences if s.role == "assistant" and not extractive.is_pleasantry(s.text)]

    # The first thing the user asked for or reported as broken is what the conversation was for.
    requests = [s for s in user if extractive._REQUEST.search(s.text) or memory_patterns._PROBLEM.search(s.text)]
    intent_sentence = requests[0] if requests else (user[0] if user else None)
    intent = intent_sentence.text if intent_sentence else ""
    topic = extractive.topic_phrase(user + assistant, weights, lead=intent_sentence)

    outcome = ""
    if assistant:
        decided = [s for s in assistant if extractive._DECISION.search(s.text)]
        tail = assistant[-max(3, len(assistant) // 3) :]
        pool = decided[-3:] or tail
        best = max(pool, key=lambda s: (extractive.sentence_score(s, weights), s.position))
        outcome = best.text

    open_items = [s.text for s in _open_questions(sentences, _answered_questions(turns))]
    open_items += [s.text for s in sentences if extractive._TODO.search(s.text) and s.text not in open_items]
    open_items = open_items[:OPEN_ITEMS_MAX]

    used = {intent, outcome, *open_items}
    facts = [
        s
        for s in sentences
        if s.text not in used
        and not extractive.is_pleasantry(s.text)
        and not s.text.rstrip().endswith("?")
        and (
            extractive._DIGIT.search(s.text)
            or extractive._DATE.search(s.text)
            or extractive._CAPITALIZED.search(s.text)
            or re.search(r"\b(?:is|are|was|were|has|have|costs?|means?)\b", s.text)
        )
    ]
    chosen = extractive.select(facts, weights, max_words=160)[:6]
    key_facts = [(s.role, _plain(s.text)) for s in chosen]
    return Overview(
        topic=topic,
        intent=_plain(intent),
        outcome=_plain(outcome),
        open_items=[_plain(item) for item in open_items],
        key_facts=key_facts,
    )


class LiteLLMEngine:
    """An LLM through litellm, with the extractive engine behind every call."""

    backend = "litellm"
    generates = True

    def __init__(self, *, model: str, api_base: str, api_key: str, timeout: float, retries: int) -> None:
        self.name = model
        self.api_base = api_base or None
        self.api_key = api_key or None
        self.timeout = timeout
        self.retries = retries
        self.fallback = ExtractiveEngine()

    def warm(self) -> None:
        """Runs litellm's streaming path once on a mocked answer and loads the provider's client: in a new
        process the first streamed answer otherwise spends about three seconds of CPU importing them, while
        every turn that arrives meanwhile waits behind it."""
        litellm = litellm_module()
        for _ in litellm.completion(
            messages=[{"role": "user", "content": "warming up"}], stream=True, mock_response="warm", **self._endpoint()
        ):
            pass
        litellm.get_llm_provider(self.name, api_base=self.api_base)
        # litellm reaches most providers through the openai client, whose resources load on first use.
        importlib.import_module("openai.resources.chat.completions")
        # The same for answers streamed on an event loop (``astream``), on a loop of this thread's own.
        asyncio.run(self._warm_on_a_loop())
        if route := self._route():  # answers streamed through the openai client (``_route``)
            openai_clients_warm(route)

    async def _warm_on_a_loop(self) -> None:
        litellm = litellm_module()
        response = await litellm.acompletion(
            messages=[{"role": "user", "content": "warming up"}], stream=True, mock_response="warm", **self._endpoint()
        )
        async for _ in response:
            pass

    def _endpoint(self) -> dict:
        """Which model litellm calls, where, and how patiently."""
        return {
            "model": self.name,
            "timeout": self.timeout,
            "num_retries": self.retries,
            "api_base": self.api_base,
            "api_key": self.api_key,
        }

    def _record(self, purpose: str, started: float, owner_id: int | None, **fields) -> None:
        _record_generation(self, purpose, started, owner_id, **fields)

    def complete(self, messages: list[dict], *, purpose: str, owner_id: int | None) -> str:
        """One chat completion; records tokens, cost and failures. Raises on failure."""
        litellm = litellm_module()

        started = time.perf_counter()
        try:
            response = litellm.completion(messages=messages, temperature=0, **self._endpoint())
            text = response.choices[0].message.content or ""
        except Exception as exc:  # provider errors come in many types; all mean "no answer"
            self._record(purpose, started, owner_id, error=f"{type(exc).__name__}: {exc}")
            raise
        usage = getattr(response, "usage", None)
        try:
            cost = float(litellm.completion_cost(completion_response=response) or 0.0)
        except Exception:  # a model without a price is not an error
            cost = 0.0
        self._record(
            purpose,
            started,
            owner_id,
            input_tokens=getattr(usage, "prompt_tokens", 0) or 0,
            output_tokens=getattr(usage, "completion_tokens", 0) or 0,
            cost_usd=cost,
        )
        return text

    def _route(self) -> OpenAIRoute | None:
        """Where answers are streamed straight through the openai client: a model litellm reaches
        through the OpenAI API, unless LLM_STREAM_OPENAI_CLIENT is off. litellm re-wraps every piece of a
        streamed answer in objects of its own, which cost the process about three times what reading the
        answer does (85-98 against 27-31 ms of CPU for an answer of 100 pieces, ``bench/streaming.py``): in
        a burst of answers that was
        the largest single cost of a web process."""
        if not settings.LLM_STREAM_OPENAI_CLIENT:
            return None
        return openai_route(
            model=self.name, api_base=self.api_base, api_key=self.api_key, timeout=self.timeout, retries=self.retries
        )

    def stream(self, messages: list[dict], *, purpose: str, owner_id: int | None, session_id=None) -> Iterator[str]:
        """A chat completion streamed piece by piece. Raises on failure, before or during the stream
        (``IncompleteAnswer`` when it stops without the provider saying the answer was finished);
        closing the generator (a cancelled answer) closes the connection to the provider."""
        route = self._route()
        started = time.perf_counter()
        produced: list[str] = []
        error = ""
        try:
            pieces = _openai_pieces(messages, route) if route else self._litellm_pieces(messages)
            with contextlib.closing(pieces):
                for piece in pieces:
                    produced.append(piece)
                    yield piece
        except GeneratorExit:
            error = "cancelled"
            raise
        except Exception as exc:  # provider errors come in many types; the caller reports them
            error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            # Recorded as the stream ends, in whatever context consumes it: the conversation is named.
            self._record(purpose, started, owner_id, session_id=session_id, **_streamed(messages, produced, error))

    async def astream(self, messages: list[dict], *, call: StreamedCall) -> AsyncIterator[str]:
        """``stream`` on an event loop: the same pieces, failures and records (left in ``call`` for a
        thread to write). A hundred answers streaming at once cost a process half the time they cost as
        a hundred threads each reading its own connection, and leave it free for the turns being
        prepared. Closing the generator closes the connection to the provider."""
        route = self._route()
        produced: list[str] = []
        error = ""
        try:
            pieces = _openai_apieces(messages, route) if route else self._litellm_apieces(messages)
            async with contextlib.aclosing(pieces):
                async for piece in pieces:
                    produced.append(piece)
                    yield piece
        except (GeneratorExit, asyncio.CancelledError):
            error = "cancelled"
            raise
        except Exception as exc:  # provider errors come in many types; the caller reports them
            error = f"{type(exc).__name__}: {exc}"
            raise
        finally:
            call.fields = _streamed(messages, produced, error)

    def _litellm_pieces(self, messages: list[dict]) -> Iterator[str]:
        response = litellm_module().completion(messages=messages, temperature=0.2, stream=True, **self._endpoint())
        finished = False
        try:
            for chunk in response:
                piece = chunk.choices[0].delta.content if chunk.choices else None
                if piece:
                    yield piece
            # litellm ends every stream with a "stop" chunk of its own; only this attribute tells
            # whether the provider itself said the answer was finished.
            if getattr(response, "received_finish_reason", "") is None:
                raise IncompleteAnswer(INCOMPLETE_ANSWER)
            finished = True
        finally:
            if not finished:
                close = getattr(response, "close", None) or getattr(
                    getattr(response, "completion_stream", None), "close", None
                )
                if close:
                    with contextlib.suppress(Exception):
                        close()

    async def _litellm_apieces(self, messages: list[dict]) -> AsyncIterator[str]:
        response = await litellm_module().acompletion(
            messages=messages, temperature=0.2, stream=True, **self._endpoint()
        )
        finished = False
        try:
            async for chunk in response:
                piece = chunk.choices[0].delta.content if chunk.choices else None
                if piece:
                    yield piece
            if getattr(response, "received_finish_reason", "") is None:  # as in ``_litellm_pieces``
                raise IncompleteAnswer(INCOMPLETE_ANSWER)
            finished = True
        finally:
            if not finished:
                with contextlib.suppress(Exception):
                    await response.aclose()

    def _json(self, messages: list[dict], *, purpose: str, owner_id: int | None):
        text = self.complete(messages, purpose=purpose, owner_id=owner_id)
        match = re.search(r"```(?:json)?\s*(.*?)```", text, re.DOTALL)
        return json.loads(match.group(1) if match else text)

    def overview(self, turns: Sequence[Turn], *, owner_id: int | None = None) -> Overview:
        prompt = (
            "Summarise this conversation as JSON with keys: topic (a few words), intent (what the user wanted), "
            "outcome (what was concluded or answered), open_items (list of unresolved questions or to-dos), "
            "key_facts (list of {who: 'user'|'assistant', fact}). Use only what the conversation says.\n\n"
            + _transcript(turns)
        )
        try:
            data = self._json([{"role": "user", "content": prompt}], purpose="archive_overview", owner_id=owner_id)
            return Overview(
                topic=str(data.get("topic", "")),
                intent=str(data.get("intent", "")),
                outcome=str(data.get("outcome", "")),
                open_items=[str(item) for item in data.get("open_items", [])][:8],
                key_facts=[(str(f.get("who", "")), str(f.get("fact", ""))) for f in data.get("key_facts", [])][:10],
            )
        except Exception:  # unusable answer: the extractive overview is still right, if plainer
            return self.fallback.overview(turns, owner_id=owner_id)

    def summarize(self, turns: Sequence[Turn], *, previous: str, max_words: int, owner_id: int | None = None) -> str:
        prompt = (
            f"Update the running summary of a conversation with the new turns below. At most {max_words} words. "
            "Keep names, numbers, decisions and open questions; drop pleasantries. Answer with the summary only.\n\n"
            f"Running summary:\n{previous or '(empty)'}\n\nNew turns:\n{_transcript(turns)}"
        )
        try:
            summary = self.complete([{"role": "user", "content": prompt}], purpose="rolling_summary", owner_id=owner_id)
            words = summary.split()
            if not words:
                raise ValueError("empty summary")
            return " ".join(words[:max_words])
        except Exception:  # the rolling summary must advance even when the LLM is down
            return self.fallback.summarize(turns, previous=previous, max_words=max_words, owner_id=owner_id)

    MEMORY_PROMPT = (
        "You keep long-term memories about the user of a chat assistant. From the conversation below, list what "
        "is worth remembering about the user, as JSON: "
        '{{"memories": [{{"category": ..., "key": ..., "content": ..., "turn": ...}}]}}.\n\n'
        "What to keep, and its category:\n"
        "- identity (name, age, nationality, languages), health (conditions, medication, injuries, allergies and "
        "intolerances, with their severity), work (job, employer, team, schedule), places (lives in, moved to, "
        "from): profile\n"
        '- diet (vegetarian, vegan, halal, gluten-free, "I don\'t eat pork"), likes, dislikes, preferences and '
        'how they want answers ("please always/never ..."): preferences\n'
        "- family (partner, children with names and ages, parents, siblings, pets) and the people in their life: "
        'entities; a family member\'s own fact is kept as theirs ("Their son Oliver is allergic to eggs.")\n'
        '- dates (birthdays, anniversaries, dated events) and plans ("I\'m going to", "next month I start"): '
        "events\n"
        '- habits ("I usually ..."): patterns\n'
        "- a problem the user reported and the assistant's fix: cases\n"
        '- anything the user explicitly asks to be remembered ("remember that ...", "don\'t forget ...", '
        '"note that ...", "keep in mind ...", "for future reference ...") is ALWAYS kept, in the category '
        "that fits.\n\n"
        'Never keep: questions ("am I allergic to anything?"), jokes and hyperbole ("I\'m allergic to '
        'Mondays"), hypotheticals ("if I were vegan", "maybe I\'ll move"), other people\'s facts as if they '
        'were the user\'s ("my colleague is allergic to nuts"), what someone else said ("my doctor said I '
        'might ..."), negated statements ("I\'m not vegetarian"; but "I no longer eat meat" is a diet), and '
        "anything the assistant said about the user. Several facts in one sentence are several memories.\n\n"
        "key: a short snake_case name of the subject, stable across conversations (name, location, diet, "
        "partner, peanut_allergy, daughter_mia, oat_milk_in_coffee). When the subject is one the user already "
        "has a memory for, reuse that key exactly, so the memory is updated instead of repeated.\n"
        "content: one sentence about the user in the third person, without naming them as the subject, at most "
        '{max_chars} characters ("Is severely allergic to peanuts.", "Has a daughter, Mia, aged 6.", '
        '"Prefers oat milk in coffee.").\n'
        "turn: the number of the turn it comes from.\n"
        '{{"memories": []}} if there is nothing to keep.\n\n'
        "The user's current memory keys (category/key):\n{known}\n\nConversation:\n{transcript}"
    )
    KNOWN_KEYS_IN_PROMPT = 200

    def extract_memories(
        self, turns: Sequence[Turn], *, owner_id: int | None = None, known_keys: Sequence[tuple[str, str]] = ()
    ) -> list[MemoryCandidate]:
        """Memories from the model, read leniently (a code fence, prose around the JSON, the list inside an
        object, categories by another name, a missing key); an answer with nothing usable in it, or a
        failed call, falls back to the built-in patterns."""
        known = "\n".join(f"- {category}/{key}" for category, key in list(known_keys)[: self.KNOWN_KEYS_IN_PROMPT])
        transcript = "\n".join(
            f"[{i}] {t.role}: {'(answered with quoted passages)' if t.derived else t.content}"
            for i, t in enumerate(turns)
        )
        prompt = self.MEMORY_PROMPT.format(
            max_chars=memory_patterns.CONTENT_MAX_CHARS, known=known or "(none yet)", transcript=transcript
        )
        try:
            answer = self.complete(
                [{"role": "user", "content": prompt}], purpose="memory_extraction", owner_id=owner_id
            )
            return memory_patterns.from_model_answer(answer, turn_count=len(turns), known_keys=known_keys)
        except Exception:  # a failed call or an unusable answer: the patterns still find what they can
            return self.fallback.extract_memories(turns, owner_id=owner_id)

    def describe(self, texts: Sequence[str], *, max_words: int, owner_id: int | None = None) -> str:
        prompt = (
            f"Write an overview of the text below in at most {max_words} words: what it is about and its key facts "
            "(names, numbers, dates, decisions). Answer with the overview only.\n\n"
            # A directory with many children must not overflow the model's context.
            + "\n\n".join(texts)[:DESCRIBE_INPUT_CHARS]
        )
        try:
            answer = self.complete([{"role": "user", "content": prompt}], purpose="document_tier", owner_id=owner_id)
            # A model may answer in Markdown; a tier is plain sentences, like the extractive engine's.
            words = " ".join(extractive.plain_sentences(answer)).split()
            if not words:
                raise ValueError("empty overview")
            return " ".join(words[:max_words])
        except Exception:  # the tier is still needed: the extractive overview stands in
            return self.fallback.describe(texts, max_words=max_words, owner_id=owner_id)


def _transcript(turns: Sequence[Turn]) -> str:
    # A derived turn's words are not the conversation's; that it happened (a question got an answer) is.
    return "\n".join(f"{t.role}: {'(answered with quoted passages)' if t.derived else t.content}" for t in turns)


def text_engine() -> TextEngine:
    """The configured engine: litellm when LLM_MODEL is set, the extractive engine otherwise."""
    if settings.LLM_MODEL:
        return LiteLLMEngine(
            model=settings.LLM_MODEL,
            api_base=settings.LLM_API_BASE,
            api_key=settings.LLM_API_KEY,
            timeout=settings.LLM_TIMEOUT_S,
            retries=settings.LLM_MAX_RETRIES,
        )
    return ExtractiveEngine()
