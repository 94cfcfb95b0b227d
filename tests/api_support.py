"""Helpers for the API backend tests: requests with images, backends aimed at a ChatServer, and
a raw server that misbehaves as real APIs do (RawServer)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np

from vidbench.core.messages import ImagePart, Message, TextPart
from vidbench.core.requests import GenerationConfig, Request, Response
from vidbench.media.images import encode_image
from vidbench.models.base import Model
from vidbench.models.registry import ModelOptions, load_model
from vidbench.testing import ChatServer

BACKENDS = ("openai", "anthropic", "gemini")
FAKE_KEYS = {"ANTHROPIC_API_KEY": "sk-test-anthropic-0123", "GEMINI_API_KEY": "sk-test-gemini-0123"}


def image(shade: int, label: str = "") -> ImagePart:
    pixels = np.full((8, 8, 3), shade, np.uint8)
    pixels[2:5, 2:5] = 255 - shade
    return ImagePart(encode_image(pixels), label=label or f"image {shade}")


def request(i: int, text: str | None = None, generation: GenerationConfig | None = None) -> Request:
    """A system prompt, then a user turn: image, text, image, text."""
    messages = (
        Message("system", (TextPart("Answer with a letter."),)),
        Message(
            "user",
            (
                image(10 + i),
                TextPart(text or f"Question {i}: which one?"),
                image(200 - i),
                TextPart(" (A) or (B)"),
            ),
        ),
    )
    return Request(f"key{i}", f"sample{i}", messages, generation or GenerationConfig())


def backend(
    kind: str, server: ChatServer | RawServer, concurrency: int = 16, **options: str | float | int
) -> Model:
    """A model of `kind` talking to `server`, with fast retries unless told otherwise."""
    extra = {"backoff": "0.01", "timeout": "5"} | {k: str(v) for k, v in options.items()}
    if kind == "openai":
        spec = f"openai-compat:{server.base_url}#fake-model"
    else:
        extra["base_url"] = server.root_url
        spec = {"anthropic": "anthropic:claude-test", "gemini": "gemini:gemini-test"}[kind]
    return load_model(spec, ModelOptions(concurrency=concurrency, extra=extra))


def ask(model: Model, requests: Sequence[Request]) -> list[Response]:
    """start(), generate() and aclose() in one event loop, as the runner does."""

    async def go() -> list[Response]:
        try:
            await model.start()
            return await model.generate(requests)
        finally:
            await model.aclose()

    return asyncio.run(go())


# ------------------------------------------------------------------ a server that misbehaves
class RawServer:
    """A real HTTP server on 127.0.0.1 whose every POST is answered by the next scripted
    `Answer` (the last one repeats): any status, headers and body bytes, a wait before it, or a
    connection cut. For what the fake chat server's well-formed replies cannot say (a body
    that is not JSON, content as a list of parts, an HTTP-date Retry-After, a spent quota).
    GET (the backends' preflight) lists no models."""

    def __init__(self, *script: Answer) -> None:
        self.script = list(script)
        self.posts = 0
        self._lock = threading.Lock()
        self._http = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._http.daemon_threads = True
        self._thread = threading.Thread(target=self._http.serve_forever, daemon=True)

    @property
    def root_url(self) -> str:
        return f"http://127.0.0.1:{self._http.server_address[1]}"

    @property
    def base_url(self) -> str:
        return f"{self.root_url}/v1"

    def __enter__(self) -> RawServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._http.shutdown()
        self._http.server_close()

    def _next(self) -> Answer:
        with self._lock:
            self.posts += 1
            return self.script.pop(0) if len(self.script) > 1 else self.script[0]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_GET(self) -> None:
                Answer(body={"object": "list", "data": [], "models": []}).send(self)

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", 0)))
                server._next().send(self)

        return Handler


@dataclass(frozen=True)
class Answer:
    """One scripted HTTP answer: `body` (JSON, or bytes as they are), or `cut` after a part of
    it; `wait_s` first."""

    status: int = 200
    body: object = None
    headers: tuple[tuple[str, str], ...] = ()
    content_type: str = "application/json"
    cut: bool = False
    wait_s: float = 0.0

    def send(self, handler: BaseHTTPRequestHandler) -> None:
        time.sleep(self.wait_s)
        raw = self.body if isinstance(self.body, bytes) else json.dumps(self.body).encode()
        handler.send_response(self.status)
        handler.send_header("content-type", self.content_type)
        handler.send_header("content-length", str(len(raw) + (100 if self.cut else 0)))
        for name, value in self.headers:
            handler.send_header(name, value)
        handler.end_headers()
        handler.wfile.write(raw)
        if self.cut:
            handler.close_connection = True


def completion(content: object = "(A)", finish: str = "stop", usage: bool = True) -> Answer:
    """An OpenAI chat completion with this message content and finish_reason."""
    body: dict[str, object] = {
        "id": "chatcmpl-1",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": content},
                "finish_reason": finish,
            }
        ],
    }
    if usage:
        body["usage"] = {"prompt_tokens": 7, "completion_tokens": 2, "total_tokens": 9}
    return Answer(body=body)


def openai_error(status: int, message: str, code: str | None = None, **headers: str) -> Answer:
    """An OpenAI error body with this status (and headers, `retry_after` as Retry-After)."""
    error = {"message": message, "type": code or "api_error", "code": code}
    listed = tuple((name.replace("_", "-"), value) for name, value in headers.items())
    return Answer(status, {"error": error}, listed)
