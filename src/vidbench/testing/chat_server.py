"""A fake model server for tests, benchmarks and dry runs: real HTTP on 127.0.0.1.

    with ChatServer(latency=1.0, capacity=64, faults=FaultPlan(rate=0.2, seed=0)) as server:
        spec = f"openai-compat:{server.base_url}#fake"       # http://127.0.0.1:PORT/v1
        ...
        server.stats().max_in_flight

It speaks three APIs on one port: OpenAI chat completions (`POST /v1/chat/completions`),
Anthropic messages (`POST /v1/messages`) and Gemini (`POST /v1[beta]/models/MODEL:generateContent`),
plus `GET /v1/models`, `GET /v1beta/models` (preflight checks) and `GET /_stats` (the counters as
JSON, for a server in another process).

- `latency`: seconds each answered request takes. `capacity`: requests served at once; the others
  wait in line (`queue=True`, like a real server) or get a 429 (`queue=False`).
- `faults`: a seeded `FaultPlan` drawing, per arriving request, one of "429", "500", "timeout"
  (hold the request until the client gives up), "malformed" (200 with a truncated JSON body),
  "disconnect" (the connection breaks mid-body), "400" (a client error, never worth a retry),
  "bad-utf8" (200, a complete body whose answer text holds bytes that are not UTF-8) or
  "non-text" (200, a complete body whose answer text is the number 5).
- `reply`: the answer text, or a function (request body -> str | Reply) to script replies,
  refusals, safety blocks and HTTP errors (see fake_apis.Reply).
- `api_key`: when set, a request must carry it (Authorization: Bearer, x-api-key or
  x-goog-api-key) or gets a 401 that, like some real APIs, quotes the key it was sent.
- Every request body is recorded (`record=True`) and counted per distinct body, so a test can
  assert that nothing is sent again once it got a good answer (`resent_after_answer`).

Run it alone with `python -m vidbench.testing.chat_server --latency 1 --capacity 64`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import random
import socket
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import JsonValue

from vidbench.core.files import Json
from vidbench.testing.fake_apis import (
    FakeAnthropicMessages,
    FakeGeminiGenerate,
    FakeOpenAIChat,
    Reply,
    WireApi,
    request_text,
)
from vidbench.testing.server_state import FaultPlan, ServerState, ServerStats, body_key

try:
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse, Response
except ImportError as e:  # pragma: no cover - depends on the installed extras
    NEEDS = "the fake chat server needs fastapi and uvicorn: pip install 'vidbench[testing]'"
    if __name__ == "__main__":  # `python -m vidbench.testing.chat_server`: a line, no traceback
        raise SystemExit(f"error: {NEEDS} (not installed: {e.name})") from None
    raise ImportError(NEEDS) from e
if TYPE_CHECKING:
    import uvicorn
    from starlette.types import Receive, Scope, Send

__all__ = ["ChatServer", "FaultPlan", "Reply", "ServerStats", "request_text"]

ReplyFn = Callable[[dict[str, JsonValue]], "str | Reply"]


class ChatServer:
    """The fake server; a context manager that serves from a background thread."""

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, **settings: Any) -> None:
        """`settings`: those `reset` takes (latency, capacity, ..., api_key), by name."""
        self.host = host
        self.reset(**settings)
        self._socket = socket.create_server((host, port), backlog=4096)
        self.port: int = self._socket.getsockname()[1]
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    # ----------------------------------------------------------------- addresses and counters
    @property
    def root_url(self) -> str:
        """http://127.0.0.1:PORT (Anthropic and Gemini clients take this as their base URL)."""
        return f"http://{self.host}:{self.port}"

    @property
    def base_url(self) -> str:
        """http://127.0.0.1:PORT/v1, the OpenAI-compatible base URL."""
        return f"{self.root_url}/v1"

    def stats(self) -> ServerStats:
        return self._state.stats()

    def reset(
        self,
        *,
        latency: float = 0.0,
        capacity: int = 64,
        queue: bool = True,
        faults: FaultPlan | None = None,
        reply: str | Reply | ReplyFn = "(A)",
        record: bool = True,
        retry_after: float | None = None,
        api_key: str | None = None,
    ) -> ChatServer:
        """Set every setting (defaults for those not given) and start counting afresh; lets
        one running server serve many tests. Call it while no request is in flight."""
        if capacity < 1:
            raise ValueError("capacity must be at least 1")
        self.latency = latency
        self.capacity = capacity
        self.queue = queue
        self.reply = reply
        self.retry_after = retry_after
        self.api_key = api_key
        self._state = ServerState(faults or FaultPlan(), record)
        self._slots: asyncio.Semaphore | None = None  # made on the server's loop when needed
        return self

    def set_faults(self, faults: FaultPlan) -> None:
        """Change the fault plan of a running server (its script counts from now on)."""
        with self._state.lock:
            self._state.faults = faults
            self._state.rng = random.Random(faults.seed)
            self._state.offset = self._state.received

    @property
    def requests(self) -> list[dict[str, JsonValue]]:
        """Every request body received, in arrival order (a copy)."""
        with self._state.lock:
            return list(self._state.requests)

    def sends(self) -> dict[str, int]:
        """How often each distinct request body arrived."""
        with self._state.lock:
            return dict(self._state.sends)

    # ----------------------------------------------------------------------------- lifecycle
    def _uvicorn(self) -> uvicorn.Server:
        import uvicorn

        config = uvicorn.Config(
            self.app(),
            log_level="critical",
            access_log=False,
            lifespan="off",
            timeout_graceful_shutdown=1,
        )
        return uvicorn.Server(config)

    def start(self) -> ChatServer:
        server = self._server = self._uvicorn()
        self._thread = threading.Thread(
            target=server.run, kwargs={"sockets": [self._socket]}, daemon=True
        )
        self._thread.start()
        deadline = time.monotonic() + 10
        while not server.started:
            if not self._thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"the fake chat server on {self.root_url} did not start")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        if self._server is not None and self._thread is not None:
            self._server.should_exit = True
            self._thread.join(timeout=10)
        self._socket.close()

    def serve_forever(self) -> None:
        """Serve in this thread until interrupted (the command-line use)."""
        server = self._server = self._uvicorn()
        server.run(sockets=[self._socket])

    def __enter__(self) -> ChatServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---------------------------------------------------------------------------- the app
    def app(self) -> FastAPI:
        app = FastAPI()

        @app.post("/v1/chat/completions")
        async def chat(request: Request) -> Any:
            return await self._handle(request, FakeOpenAIChat, None)

        @app.post("/v1/messages")
        async def messages(request: Request) -> Any:
            return await self._handle(request, FakeAnthropicMessages, None)

        @app.post("/v1/models/{target}")
        @app.post("/v1beta/models/{target}")
        async def generate(target: str, request: Request) -> Any:
            model, _, action = target.rpartition(":")
            if action != "generateContent":
                return JSONResponse(FakeGeminiGenerate.error(404, f"no action {action!r}"), 404)
            return await self._handle(request, FakeGeminiGenerate, model)

        @app.get("/v1/models")
        @app.get("/v1beta/models")
        async def models(request: Request) -> Any:
            if (refused := self._check_key(request, FakeOpenAIChat)) is not None:
                return refused
            return {"object": "list", "data": [{"id": "fake", "object": "model"}], "models": []}

        @app.get("/_stats")
        async def stats() -> Any:
            return asdict(self.stats())

        return app

    async def _handle(self, request: Request, api: type[WireApi], path_model: str | None) -> Any:
        if (refused := self._check_key(request, api)) is not None:
            return refused
        raw = await request.body()
        try:
            body = json.loads(raw)
        except ValueError:
            return JSONResponse(api.error(400, "the request body is not JSON"), 400)
        key = body_key(raw)
        n, fault = self._state.arrive(body, key)
        answered = False
        try:
            if fault in ("429", "500", "400"):
                return self._error(api, int(fault), f"injected fault {fault}")
            if fault == "timeout":
                await _hold(request, self._state.faults.hang_s)
                return self._error(api, 504, "injected timeout")
            if fault == "disconnect":
                return _BrokenResponse()
            if self._slots is None:
                self._slots = asyncio.Semaphore(self.capacity)
            if not self.queue and self._slots.locked():
                self._state.count("capacity")
                return self._error(api, 429, "over capacity")
            async with self._slots:
                self._state.serve(1)
                try:
                    await asyncio.sleep(self.latency)
                    if fault == "malformed":
                        return Response(api.malformed, 200, media_type="application/json")
                    if fault in ("bad-utf8", "non-text"):
                        ok = api.ok(Reply(text=_MARK), body, api.model(body, path_model), n)
                        return Response(_spoiled(ok, fault), 200, media_type="application/json")
                    reply = self._reply(body)
                finally:
                    self._state.serve(-1)
            if reply.http_status is not None:
                return self._error(api, reply.http_status, reply.error)
            answered = True
            return JSONResponse(api.ok(reply, body, api.model(body, path_model), n))
        finally:
            self._state.leave(key, answered)

    def _check_key(self, request: Request, api: type[WireApi]) -> JSONResponse | None:
        if self.api_key is None:
            return None
        h = request.headers
        sent = h.get("x-api-key") or h.get("x-goog-api-key") or h.get("authorization", "")
        sent = sent.removeprefix("Bearer ")
        if sent == self.api_key:
            return None
        self._state.count("401")
        return JSONResponse(api.error(401, f"Incorrect API key provided: {sent}"), 401)

    def _reply(self, body: dict[str, JsonValue]) -> Reply:
        made = self.reply(body) if callable(self.reply) else self.reply
        return Reply(text=made) if isinstance(made, str) else made

    def _error(self, api: type[WireApi], status: int, message: str) -> JSONResponse:
        headers = {}
        if status == 429 and self.retry_after is not None:
            headers["retry-after"] = f"{self.retry_after:g}"
        return JSONResponse(api.error(status, message), status, headers=headers)


_MARK = "(fake answer text)"


def _spoiled(ok: Mapping[str, Json], fault: str) -> bytes:
    """A good reply body whose answer text is replaced: by invalid UTF-8 ("bad-utf8") or by a
    number ("non-text"); the rest of the body is well-formed JSON."""
    quoted = json.dumps(_MARK).encode()
    spoiled = b'"(\xff\xfe)"' if fault == "bad-utf8" else b"5"
    return json.dumps(ok).encode().replace(quoted, spoiled)


async def _hold(request: Request, limit_s: float) -> None:
    """Keep a request open until its client hangs up (or `limit_s` passes)."""
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline and not await request.is_disconnected():
        await asyncio.sleep(0.02)


class _BrokenResponse(Response):
    """Starts a 200 response, sends part of the body and stops: the connection breaks."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = [(b"content-type", b"application/json"), (b"content-length", b"1000")]
        await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b'{"id": "cut', "more_body": True})


def scripted_replies(path: str, default: str) -> Callable[[dict[str, JsonValue]], str]:
    """A `reply` function from a JSON file: a list of `{"when": TEXT, "reply": ANSWER}`, tried in
    order; the first rule whose TEXT occurs in the request's text (request_text) gives ANSWER (a
    string as it is, any other JSON value as its JSON text), else `default`. TEXT may be a list
    of texts that must all occur. For dry runs of pipelines whose prompts need different answers
    (`vidbench curate ...`)."""
    try:
        rules = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise SystemExit(f"--replies {path}: {e}") from e
    if not isinstance(rules, list) or not all(_is_rule(r) for r in rules):
        raise SystemExit(f'--replies {path}: expected a list of {{"when": TEXT, "reply": ...}}')
    script = [
        (
            [r["when"]] if isinstance(r["when"], str) else r["when"],
            r["reply"] if isinstance(r["reply"], str) else json.dumps(r["reply"]),
        )
        for r in rules
    ]

    def reply(body: dict[str, JsonValue]) -> str:
        text = request_text(body)
        return next((answer for texts, answer in script if all(w in text for w in texts)), default)

    return reply


def _is_rule(rule: JsonValue) -> bool:
    if not isinstance(rule, dict) or "reply" not in rule:
        return False
    when = rule.get("when")
    return isinstance(when, str) or (
        isinstance(when, list) and bool(when) and all(isinstance(w, str) for w in when)
    )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="A fake chat-completions server on 127.0.0.1")
    parser.add_argument("--port", type=int, default=8000, help="0 picks a free port")
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--capacity", type=int, default=64)
    parser.add_argument("--no-queue", action="store_true", help="429 when over capacity")
    parser.add_argument("--fault-rate", type=float, default=0.0)
    parser.add_argument("--fault-kinds", default="429,500,timeout,malformed")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reply", default="(A)", help="the answer to every request")
    parser.add_argument(
        "--replies",
        metavar="FILE",
        help='JSON list of {"when": TEXT, "reply": ANSWER}: the first rule whose TEXT is in the '
        "request answers it, else --reply",
    )
    parser.add_argument("--no-record", action="store_true", help="do not keep request bodies")
    args = parser.parse_args(argv)
    faults = FaultPlan(args.fault_rate, tuple(args.fault_kinds.split(",")), args.seed)
    server = ChatServer(
        port=args.port,
        latency=args.latency,
        capacity=args.capacity,
        queue=not args.no_queue,
        faults=faults,
        reply=scripted_replies(args.replies, args.reply) if args.replies else args.reply,
        record=not args.no_record,
    )
    print(server.base_url, flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
