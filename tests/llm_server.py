"""A small OpenAI-compatible server on loopback, so litellm is tested over real HTTP (and streaming),
never by patching it. Chat replies come from a script the test sets; embeddings are bag-of-words
vectors, so texts sharing words are similar."""

from __future__ import annotations

import hashlib
import json
import math
import re
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass
class FakeLLM:
    dimensions: int = 384
    reply: Callable[[list[dict]], str] = lambda messages: "ok"
    failures: int = 0  # the next N requests answer 503
    delay_s: float = 0.0
    token_delay_s: float = 0.0
    break_after: int = 0  # a streamed answer's connection is cut after this many pieces (0: never)
    requests: list[dict] = field(default_factory=list)
    url: str = ""

    def embed(self, text: str) -> list[float]:
        vector = [0.0] * self.dimensions
        for word in re.findall(r"[a-z0-9]+", text.lower()):
            bucket = int(hashlib.sha256(word.encode()).hexdigest(), 16) % self.dimensions
            vector[bucket] += 1.0
        norm = math.sqrt(sum(x * x for x in vector)) or 1.0
        return [x / norm for x in vector]


def _handler(fake: FakeLLM):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # keep test output clean
            pass

        def _json(self, status: int, body: dict) -> None:
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self):
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
            fake.requests.append({"path": self.path, "body": body, "authorization": self.headers.get("Authorization")})
            if fake.delay_s:
                time.sleep(fake.delay_s)
            if fake.failures > 0:
                fake.failures -= 1
                return self._json(503, {"error": {"message": "overloaded", "type": "server_error"}})
            if self.path.endswith("/embeddings"):
                inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
                return self._json(
                    200,
                    {
                        "object": "list",
                        "model": body["model"],
                        "data": [
                            {"object": "embedding", "index": i, "embedding": fake.embed(t)}
                            for i, t in enumerate(inputs)
                        ],
                        "usage": {
                            "prompt_tokens": sum(len(t.split()) for t in inputs),
                            "total_tokens": sum(len(t.split()) for t in inputs),
                        },
                    },
                )
            if self.path.endswith("/chat/completions"):
                text = fake.reply(body["messages"])
                if body.get("stream"):
                    return self._stream(body, text)
                return self._json(
                    200,
                    {
                        "id": "chatcmpl-test",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": body["model"],
                        "choices": [
                            {"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
                        ],
                        "usage": {
                            "prompt_tokens": 40,
                            "completion_tokens": len(text.split()),
                            "total_tokens": 40 + len(text.split()),
                        },
                    },
                )
            return self._json(404, {"error": {"message": f"no route {self.path}"}})

        def _stream(self, body: dict, text: str) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.end_headers()
            pieces = re.findall(r"\S+\s*", text) or [""]
            for index, piece in enumerate(pieces):
                if fake.break_after and index >= fake.break_after:
                    # The provider dies mid-answer: the connection drops without the closing chunk.
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                chunk = {
                    "id": "chatcmpl-test",
                    "object": "chat.completion.chunk",
                    "created": int(time.time()),
                    "model": body["model"],
                    "choices": [{"index": 0, "delta": {"content": piece}, "finish_reason": None}],
                }
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
                if fake.token_delay_s:
                    time.sleep(fake.token_delay_s)
            last = {
                "id": "chatcmpl-test",
                "object": "chat.completion.chunk",
                "created": int(time.time()),
                "model": body["model"],
                "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}],
            }
            self.wfile.write(f"data: {json.dumps(last)}\n\ndata: [DONE]\n\n".encode())
            self.wfile.flush()

    return Handler


def start(fake: FakeLLM) -> ThreadingHTTPServer:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(fake))
    server.daemon_threads = True
    fake.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def main() -> None:
    """Runs the server alone (for benchmarks: a model in a process of its own, as a real one would be)."""
    import argparse

    parser = argparse.ArgumentParser(description="A loopback OpenAI-compatible server that streams a stub answer.")
    parser.add_argument("--words", type=int, default=100)
    parser.add_argument("--token-ms", type=float, default=20.0)
    args = parser.parse_args()
    fake = FakeLLM(
        reply=lambda messages: " ".join(f"w{i}" for i in range(args.words)), token_delay_s=args.token_ms / 1000
    )
    server = start(fake)
    print(fake.url, flush=True)
    try:
        threading.Event().wait()
    finally:
        server.shutdown()


if __name__ == "__main__":
    main()
