"""All model work in one place: embeddings and text generation, with accounting of every call.

With EMBEDDING_MODEL unset, vectors come from a local model shipped in a wheel; with LLM_MODEL unset,
summaries, overviews and memory extraction come from the built-in extractive engine. Otherwise
litellm does the work, and the extractive engine stands in when a call fails. Each call is recorded
as a ``ModelCall`` (tokens, cost, latency, errors), which the admin shows.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
from django.conf import settings

from foundation.accounting import record_call
from foundation.ai.embeddings import EmbeddingError, active_embedding_model, embedding_backend
from foundation.ai.engines import Overview, StreamedCall, StreamingEngine, TextEngine, Turn, spoken, text_engine
from foundation.ai.memories import MemoryCandidate
from foundation.ai.memory_text import ASKED_AS, IMPLICATIONS
from foundation.ai.tokens import estimate_tokens

logger = logging.getLogger(__name__)

__all__ = [
    "EmbeddingError",
    "MemoryCandidate",
    "Overview",
    "QueryEmbedding",
    "StreamedCall",
    "StreamingEngine",
    "TextEngine",
    "Turn",
    "active_embedding_model",
    "embed_query",
    "embed_query_later",
    "embed_query_or_none",
    "embed_texts",
    "estimate_tokens",
    "implications_asked",
    "record_call",
    "spoken",
    "text_engine",
]


def _record_embedding(
    purpose: str, backend: str, model: str, started: float, owner_id: int | None, count: int, **outcome
) -> None:
    record_call(
        kind="embedding",
        purpose=purpose,
        backend=backend,
        model=model,
        started=started,
        owner_id=owner_id,
        input_count=count,
        **outcome,
    )


def embed_texts(texts: Sequence[str], *, purpose: str, owner_id: int | None = None) -> tuple[list[list[float]], str]:
    """Vectors for ``texts`` and the name of the model that made them. Raises EmbeddingError."""
    backend = embedding_backend()
    started = time.perf_counter()
    try:
        batch = _checked(backend.embed(list(texts)))
    except Exception as exc:  # a provider error or a broken model file: no vectors, never a crash upstream
        error = _embedding_error(exc)
        _accounted(purpose, owner_id, started, len(texts), backend_name=backend.name, error=error)
        if error is exc:
            raise
        raise error from exc
    _accounted(purpose, owner_id, started, len(texts), backend_name=backend.name, batch=batch)
    return batch.vectors, batch.model


def _accounted(
    purpose: str, owner_id: int | None, started: float, count: int, *, backend_name: str, batch=None, error=None
) -> None:
    """Records one embedding call: its batch's tokens and cost, or why it failed."""
    if error is not None:
        _record_embedding(purpose, _backend_kind(), backend_name, started, owner_id, count, error=str(error))
        return
    _record_embedding(
        purpose,
        _backend_kind(),
        batch.model,
        started,
        owner_id,
        count,
        input_tokens=batch.input_tokens,
        cost_usd=batch.cost_usd,
    )


def _backend_kind() -> str:
    return "litellm" if settings.EMBEDDING_MODEL else "local"


def _checked(batch):
    if batch.vectors and len(batch.vectors[0]) != settings.EMBEDDING_DIMENSIONS:
        raise EmbeddingError(
            f"{batch.model} makes {len(batch.vectors[0])}-dimensional vectors but EMBEDDING_DIMENSIONS is "
            f"{settings.EMBEDDING_DIMENSIONS}."
        )
    return batch


def _embedding_error(exc: Exception) -> EmbeddingError:
    return exc if isinstance(exc, EmbeddingError) else EmbeddingError(repr(exc))


def embed_query(text: str, *, purpose: str = "query", owner_id: int | None = None) -> tuple[list[float], str]:
    vectors, model = embed_texts([text], purpose=purpose, owner_id=owner_id)
    return vectors[0], model


def embed_query_or_none(text: str, *, purpose: str, owner_id: int | None) -> tuple[list[float] | None, str]:
    """The query's vector, or None when there is nothing to embed or the model fails: every caller
    still answers from the words alone."""
    if not text.strip():
        return None, active_embedding_model()
    try:
        return embed_query(text, purpose=purpose, owner_id=owner_id)
    except EmbeddingError:
        logger.warning("%s: embedding the query failed; ranking by keywords", purpose)
        return None, active_embedding_model()


# Query embeddings computed beside the request's own database work (the model releases the interpreter
# while it runs, so the two overlap on two cores); a few at once per process.
QUERY_EMBEDDING_THREADS = 8
_query_embeddings = ThreadPoolExecutor(max_workers=QUERY_EMBEDDING_THREADS, thread_name_prefix="query-embedding")


class QueryEmbedding:
    """A question's vector being computed in a thread of its own while the caller does database work
    that does not need it yet (a keyword search). ``result()`` waits for it; the model call is recorded
    then, by the caller's thread, in the caller's transaction and conversation."""

    def __init__(self, text: str, *, purpose: str, owner_id: int | None) -> None:
        self.purpose, self.owner_id, self.empty = purpose, owner_id, not text.strip()
        self.error = ""  # why there is no vector, once result() says there is none because the model failed
        self._outcome: tuple[list[float] | None, str, float] | None = None
        submitted = time.perf_counter()  # a wait for a free thread counts as the embedding's time
        self._future: Future | None = None if self.empty else _query_embeddings.submit(self._compute, text, submitted)

    @staticmethod
    def _compute(text: str, started: float) -> tuple[object, Exception | None, float]:
        try:
            return _checked(embedding_backend().embed([text])), None, time.perf_counter() - started
        except Exception as exc:  # reported, and recorded, by result()
            return None, _embedding_error(exc), time.perf_counter() - started

    def result(self) -> tuple[list[float] | None, str, float]:
        """(the vector, or None when there was nothing to embed or the model failed; the model; ms)."""
        if self._outcome is None:
            self._outcome = self._recorded()
        return self._outcome

    def _recorded(self) -> tuple[list[float] | None, str, float]:
        if self._future is None:
            return None, active_embedding_model(), 0.0
        batch, error, elapsed = self._future.result()
        started = time.perf_counter() - elapsed  # the call is recorded with its own duration
        _accounted(
            self.purpose, self.owner_id, started, 1, backend_name=embedding_backend().name, batch=batch, error=error
        )
        if error is not None:
            self.error = str(error)
            logger.warning("%s: embedding the query failed; ranking by keywords", self.purpose)
            return None, active_embedding_model(), round(elapsed * 1000, 2)
        return batch.vectors[0], batch.model, round(elapsed * 1000, 2)


def embed_query_later(text: str, *, purpose: str, owner_id: int | None) -> QueryEmbedding:
    """``embed_query_or_none`` started in a thread of its own; see ``QueryEmbedding``."""
    return QueryEmbedding(text, purpose=purpose, owner_id=owner_id)


# A question this close to what a kind of fact means for the person ("what should I avoid eating?" to "A
# food to avoid eating.", 0.73; "any food I should stay away from?", 0.59) asks for every fact of that kind;
# questions about other things stay under it ("what did I eat yesterday?" 0.44, "which foods are high in
# protein?" 0.40, "where do I live?" 0.04), all-MiniLM-L6-v2.
IMPLICATION_ASKED_SIMILARITY = 0.5
# Per model: the meanings, in order, and the unit vectors of the texts that ask for each, one row each.
_implication_vectors: dict[str, tuple[list[str], np.ndarray]] = {}
_implication_lock = threading.Lock()


def implications_asked(vector: Sequence[float] | None, model: str) -> dict[str, float]:
    """The meanings of facts (``memory_text.IMPLICATIONS``) that a question embedded as ``vector`` asks
    about, each with its similarity to the question: what a memory means for the person (a food to avoid
    eating, their job), when the question asks that rather than naming the fact; a meaning is also asked
    for by what questions that need it say (``memory_text.ASKED_AS``). They are embedded once per process
    and model; none when the question has no vector of the model in use, or the model cannot embed them."""
    if vector is None or model != active_embedding_model():
        return {}
    with _implication_lock:
        if model not in _implication_vectors:
            asked = [(meaning, text) for meaning in IMPLICATIONS for text in (meaning, *ASKED_AS.get(meaning, ()))]
            try:
                vectors = embedding_backend().embed([text for _, text in asked]).vectors
            except Exception:  # a search is never failed by this; the facts are still found by their own words
                logger.warning("embedding what facts mean failed", exc_info=True)
                return {}
            kept = [(meaning, other) for (meaning, _), other in zip(asked, vectors, strict=True) if other]
            _implication_vectors[model] = ([meaning for meaning, _ in kept], _units([other for _, other in kept]))
    meanings, matrix = _implication_vectors[model]
    similar: dict[str, float] = {}
    for meaning, similarity in zip(meanings, (matrix @ _units([vector])[0]).tolist(), strict=True):
        similar[meaning] = max(similarity, similar.get(meaning, similarity))
    return {meaning: value for meaning, value in similar.items() if value >= IMPLICATION_ASKED_SIMILARITY}


def _units(vectors: Sequence[Sequence[float]]) -> np.ndarray:
    """``vectors`` as rows scaled to length 1 (a hosted model's vectors need not be)."""
    rows = np.asarray(vectors, dtype=np.float64)
    return rows / np.clip(np.linalg.norm(rows, axis=1, keepdims=True), 1e-12, None)
