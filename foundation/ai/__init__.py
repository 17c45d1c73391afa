"""All model work in one place: embeddings and text generation, with accounting of every call.

With EMBEDDING_MODEL unset, vectors come from a local model shipped in a wheel; with LLM_MODEL unset,
summaries, overviews and memory extraction come from the built-in extractive engine. Otherwise
litellm does the work, and the extractive engine stands in when a call fails. Each call is recorded
as a ``ModelCall`` (tokens, cost, latency, errors), which the admin shows.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

from django.conf import settings

from foundation.accounting import record_call
from foundation.ai.embeddings import EmbeddingError, active_embedding_model, embedding_backend
from foundation.ai.engines import Overview, TextEngine, Turn, spoken, text_engine
from foundation.ai.memories import MemoryCandidate
from foundation.ai.tokens import estimate_tokens

logger = logging.getLogger(__name__)

__all__ = [
    "EmbeddingError",
    "MemoryCandidate",
    "Overview",
    "TextEngine",
    "Turn",
    "active_embedding_model",
    "embed_query",
    "embed_query_or_none",
    "embed_texts",
    "estimate_tokens",
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
    backend_kind = "litellm" if settings.EMBEDDING_MODEL else "local"
    started = time.perf_counter()
    try:
        batch = backend.embed(list(texts))
        if batch.vectors and len(batch.vectors[0]) != settings.EMBEDDING_DIMENSIONS:
            raise EmbeddingError(
                f"{batch.model} makes {len(batch.vectors[0])}-dimensional vectors but EMBEDDING_DIMENSIONS is "
                f"{settings.EMBEDDING_DIMENSIONS}."
            )
    except Exception as exc:  # a provider error or a broken model file: no vectors, never a crash upstream
        error = exc if isinstance(exc, EmbeddingError) else EmbeddingError(repr(exc))
        _record_embedding(purpose, backend_kind, backend.name, started, owner_id, len(texts), error=str(error))
        if error is exc:
            raise
        raise error from exc
    _record_embedding(
        purpose,
        backend_kind,
        batch.model,
        started,
        owner_id,
        len(texts),
        input_tokens=batch.input_tokens,
        cost_usd=batch.cost_usd,
    )
    return batch.vectors, batch.model


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
