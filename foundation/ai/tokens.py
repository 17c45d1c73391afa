"""Token estimates for budgets: four characters a token.

A tokenizer-exact count would differ per model; budgets only need a stable, cheap, model-independent
estimate, and every budget in the product uses this one.
"""

from __future__ import annotations

import math

CHARS_PER_TOKEN = 4


def estimate_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN) if text else 0


def tokens_for_chars(chars: int) -> int:
    """The same estimate for a text known only by its length."""
    return math.ceil(chars / CHARS_PER_TOKEN) if chars > 0 else 0
