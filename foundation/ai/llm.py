"""The one place litellm and the model clients are imported, configured for machines without internet
access."""

from __future__ import annotations

import asyncio
import os
import ssl
import threading
import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import openai

# The providers litellm reaches through the OpenAI API itself, with the openai client: a hosted OpenAI
# model, or any OpenAI-compatible server (vLLM, llama.cpp, LM Studio, Ollama's /v1) named ``openai/<model>``.
OPENAI_COMPATIBLE_PROVIDERS = frozenset({"openai", "custom_openai"})


def litellm_module():
    # Imported on first use, as the openai client is below: loading them costs a process start about
    # three seconds, which a product without a hosted model never needs to pay.
    # litellm would otherwise download its model price list at import; the copy it ships is enough.
    os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
    import litellm

    litellm.telemetry = False
    litellm.suppress_debug_info = True
    # litellm hands every streamed chunk to its logging callbacks on a thread pool; none are registered
    # here (each call is accounted as a ModelCall instead), and that work was most of a chunk's cost.
    litellm.disable_streaming_logging = True
    return litellm


@dataclass(frozen=True)
class OpenAIRoute:
    """Where litellm would send a model's calls when its provider speaks the OpenAI API: the model's
    name at the provider, its base URL, organization and key (None: the client's default)."""

    model: str
    base_url: str | None
    api_key: str | None
    timeout: float
    retries: int
    organization: str | None = None


def openai_route(*, model: str, api_base: str | None, api_key: str | None, timeout: float, retries: int):
    """The OpenAI-API route of ``model`` as litellm resolves it, or None when litellm reaches it another
    way (Anthropic, Ollama's own API, Bedrock ...) or cannot tell."""
    try:
        name, provider, key, base = litellm_module().get_llm_provider(model, api_base=api_base, api_key=api_key)
    except Exception:  # an unknown model: litellm itself reports it, on the call
        return None
    if provider not in OPENAI_COMPATIBLE_PROVIDERS:
        return None
    litellm = litellm_module()
    # Where litellm itself would send the call when no base is given: a proxy named in the environment
    # serves the streamed answers as it serves every other call.
    base = (
        base or api_base or litellm.api_base or os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE")
    )
    organization = litellm.organization or os.environ.get("OPENAI_ORGANIZATION") or None
    return OpenAIRoute(
        model=name,
        base_url=base or None,
        api_key=key or api_key,
        timeout=timeout,
        retries=retries,
        organization=organization,
    )


# Clients are kept, as litellm keeps them: building one costs more than a streamed answer's reading. An
# async client belongs to the event loop it was built on: one set of clients per loop, dropped once the
# loop is closed (their idle connections hold the loop, so it would not go by itself).
_ASYNC_CLIENTS: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_CLIENTS: dict[OpenAIRoute, openai.OpenAI] = {}
_CLIENTS_LOCK = threading.Lock()


_TLS: list[ssl.SSLContext] = []


def _openai_module():
    import openai

    return openai


def _tls() -> ssl.SSLContext:
    """One TLS context for every client of the process, as each would build it (the CA bundle, or the
    environment's SSL_CERT_FILE): building one reads the whole bundle, about 50 ms of processor, which a
    new client (one per event loop) otherwise spent again, on the loop that serves everyone."""
    import httpx

    with _CLIENTS_LOCK:
        if not _TLS:
            _TLS.append(httpx.create_ssl_context())
        return _TLS[0]


def _client_options(route: OpenAIRoute) -> dict:
    return {
        "base_url": route.base_url,
        "api_key": route.api_key,
        "timeout": route.timeout,
        "max_retries": route.retries,
        "organization": route.organization,
    }


def _openai_client(route: OpenAIRoute) -> openai.OpenAI:
    """The openai client of ``route``, shared by threads."""
    sdk, tls = _openai_module(), _tls()
    with _CLIENTS_LOCK:
        client = _CLIENTS.get(route)
        if client is None:
            client = _CLIENTS[route] = sdk.OpenAI(
                **_client_options(route), http_client=sdk.DefaultHttpxClient(verify=tls)
            )
        return client


def _openai_async_client(route: OpenAIRoute) -> openai.AsyncOpenAI:
    """The async openai client of ``route`` for the running event loop."""
    for closed in [loop for loop in list(_ASYNC_CLIENTS) if loop.is_closed()]:
        _ASYNC_CLIENTS.pop(closed, None)
    clients = _ASYNC_CLIENTS.setdefault(asyncio.get_running_loop(), {})
    client = clients.get(route)
    if client is None:
        sdk = _openai_module()
        client = clients[route] = sdk.AsyncOpenAI(
            **_client_options(route), http_client=sdk.DefaultAsyncHttpxClient(verify=_tls())
        )
    return client


def openai_clients_warm(route: OpenAIRoute) -> None:
    """Builds what the first answer streamed by ``route`` would build (the TLS context, the thread's
    client, an event loop's client and the modules they load) without calling the model: about 100 ms
    of processor that the first person after a start would otherwise wait for, and everyone behind them."""
    _openai_client(route)

    async def on_a_loop() -> None:
        await _openai_async_client(route).close()

    asyncio.run(on_a_loop())


# The request of a streamed chat completion, made through the client's own request path (its base URL,
# key, timeout, retries, errors and server-sent events) with the chunks left as the provider's JSON: the
# typed objects ``chat.completions.create`` builds for each piece cost more than reading it. It is signed
# as ``create`` signs it, with the API key alone: the generic path would also offer an organization's
# admin key (OPENAI_ADMIN_KEY) to whatever server the model lives on.
_COMPLETIONS = "/chat/completions"
_SIGNED = {"security": {"bearer_auth": True}}


def openai_stream(route: OpenAIRoute, *, messages: list[dict], **options) -> openai.Stream:
    """A streamed chat completion of ``route``'s model, its chunks as dicts, from a thread."""
    sdk = _openai_module()
    body = {"model": route.model, "messages": messages, "stream": True, **options}
    return _openai_client(route).post(
        _COMPLETIONS, body=body, options=_SIGNED, cast_to=object, stream=True, stream_cls=sdk.Stream[object]
    )


async def openai_astream(route: OpenAIRoute, *, messages: list[dict], **options) -> openai.AsyncStream:
    """``openai_stream`` on an event loop."""
    sdk = _openai_module()
    body = {"model": route.model, "messages": messages, "stream": True, **options}
    return await _openai_async_client(route).post(
        _COMPLETIONS, body=body, options=_SIGNED, cast_to=object, stream=True, stream_cls=sdk.AsyncStream[object]
    )
