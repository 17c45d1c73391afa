"""The one place litellm is imported, configured for machines without internet access."""

from __future__ import annotations

import os


def litellm_module():
    # litellm would otherwise download its model price list at import; the copy it ships is enough.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.telemetry = False
    litellm.suppress_debug_info = True
    # litellm hands every streamed chunk to its logging callbacks on a thread pool; none are registered
    # here (each call is accounted as a ModelCall instead), and that work was most of a chunk's cost.
    litellm.disable_streaming_logging = True
    return litellm
