"""How separate signals become one ranking, for documents and conversations alike.

- ``reciprocal_rank``: each ranked list adds 1 / (RRF_K + rank), so a row high in both lists wins;
- ``blend``: cosine similarity and the share of the query's words a text holds, in [0, 1];
- ``LinearFusion``: a logistic model over named signals, whose weights are fitted on labelled data
  (bench/recall_fit.py fits the conversations' one) and kept here as constants, so a ranking is
  reproducible and every weight can be read.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from django.conf import settings

RRF_K = 60


def reciprocal_rank(ranked_lists: Iterable[Sequence[Hashable]], *, k: int = RRF_K) -> dict[Hashable, float]:
    """The reciprocal-rank fusion of several rankings of keys (best first)."""
    scores: dict[Hashable, float] = {}
    for ranked in ranked_lists:
        for rank, key in enumerate(ranked, start=1):
            scores[key] = scores.get(key, 0.0) + 1.0 / (k + rank)
    return scores


def blend(*, dense: float | None, coverage: float, keyword_weight: float | None = None) -> float:
    """A calibrated score in [0, 1]: cosine similarity and the share of query stems present, weighted
    by KEYWORD_WEIGHT. A row without a vector still scores by its keywords."""
    weight = settings.KEYWORD_WEIGHT if keyword_weight is None else keyword_weight
    return (1 - weight) * max(dense or 0.0, 0.0) + weight * coverage


@dataclass(frozen=True)
class LinearFusion:
    """A logistic model: the probability that a row is what was asked for, from named signals."""

    weights: Mapping[str, float]
    bias: float

    def probabilities(self, rows: Sequence[Mapping[str, float]]) -> list[float]:
        """The probability of each row, all at once: a few hundred candidates a question."""
        if not rows:
            return []
        names = list(self.weights)
        matrix = np.array([[row.get(name, 0.0) for name in names] for row in rows], dtype=np.float64)
        logits = matrix @ np.array([self.weights[name] for name in names]) + self.bias
        return (1.0 / (1.0 + np.exp(-logits))).tolist()
