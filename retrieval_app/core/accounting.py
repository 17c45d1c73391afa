"""Every model call, embedding or generation, is recorded with its tokens, cost, latency and error."""

from __future__ import annotations

import time

from retrieval_app.models import ModelCall


def record_call(
    *,
    kind: str,
    purpose: str,
    backend: str,
    model: str,
    started: float,
    owner_id: int | None = None,
    input_count: int = 1,
    input_tokens: int = 0,
    output_tokens: int = 0,
    cost_usd: float = 0.0,
    error: str = "",
) -> ModelCall:
    """Stores one call; ``started`` is its ``time.perf_counter()`` at the start."""
    return ModelCall.objects.create(
        kind=kind,
        purpose=purpose,
        backend=backend,
        model=model,
        owner_id=owner_id,
        input_count=input_count,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        cost_usd=round(cost_usd, 6),
        latency_ms=round((time.perf_counter() - started) * 1000, 2),
        ok=not error,
        error=error[:2000],
    )
