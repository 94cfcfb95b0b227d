"""`local-llm`: the Gemma 3 270M smoke-test model (local_llm.py), started and owned by the run.

The server starts when a request first needs it (a fully stored rerun starts nothing) and stops
with the run. Requests go through the `openai-compat:` backend unchanged. If the server process
dies (a crash of llama.cpp, the OOM killer), that failed request and every later one is answered
at once with an error saying how it died (exit code or signal) and the tail of its log, instead
of each request retrying a refused connection; the next run asks them again.

    vidbench run 4dbench-qa --data demo/data --model blind:local-llm --out results/gemma-blind
"""

from __future__ import annotations

import asyncio
import subprocess
import threading
from collections.abc import Sequence

from vidbench.core.errors import ConfigError
from vidbench.core.files import Json
from vidbench.core.requests import Request, Response
from vidbench.models import local_llm
from vidbench.models.base import Model
from vidbench.models.local_source import positive_int
from vidbench.models.registry import ModelOptions, load_model, reject_extra
from vidbench.models.retry import no_room

KNOWN = ("ctx", "threads")
CHANGE_CONTEXT = "the context (--model-opt ctx=N)"
# A server on this machine: a refused connection means it is gone, so retry little and soon.
TRANSPORT = {"max_retries": "1", "backoff": "0.2", "timeout": "300"}


class LocalLLM(Model):
    spec = "local-llm"
    start_when_needed = True  # starting loads the weights: only when a request needs it

    def __init__(self, options: ModelOptions) -> None:
        reject_extra(self.spec, options, KNOWN)
        self._options = options
        self._ctx = positive_int(self.spec, options.flag, "ctx", options.extra.get("ctx", "2048"))
        threads = options.extra.get("threads")
        self._threads = (
            positive_int(self.spec, options.flag, "threads", threads) if threads else None
        )
        self._server: local_llm.LocalLLMServer | None = None
        self._client: Model | None = None
        self._died: str | None = None

    def identity(self) -> dict[str, Json]:
        """The model, its context and which weights: the GGUF package's version (an upgrade that
        ships other weights is another model, whose answers are asked anew)."""
        return {
            "spec": self.spec,
            "model": local_llm.MODEL_NAME,
            "ctx": self._ctx,
            "weights": local_llm.weights_version(),
        }

    async def start(self) -> None:
        if self._server is not None:
            return
        local_llm.require_local_llm()
        cancelled = threading.Event()
        try:
            server = await asyncio.to_thread(
                local_llm.start_server, None, self._ctx, self._threads, cancelled=cancelled
            )
        except asyncio.CancelledError:  # Ctrl-C or SIGTERM while it starts: the thread goes on,
            cancelled.set()  # so it stops the server and removes its folder itself
            raise
        self._server = server
        options = ModelOptions(self._options.seed, self._options.concurrency, dict(TRANSPORT))
        self._client = load_model(server.spec, options)
        await self._client.start()

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        if self._client is None:
            await self.start()
        assert self._client is not None and self._server is not None
        if self._died is None:
            refused = await asyncio.to_thread(self._too_long, self._server, requests)
            asked = [r for r in requests if r.key not in refused]
            responses = await self._client.generate(asked) if asked else []
            answers = {**refused, **{r.key: r for r in responses}}
            if all(r.ok for r in responses):
                return [answers[r.key] for r in requests]
            self._died = await asyncio.to_thread(_ended, self._server)
            if self._died is None:  # the server runs: an ordinary failed request
                return [answers[r.key] for r in requests]
        return [Response(r.key, None, error=self._died) for r in requests]

    def _too_long(
        self, server: local_llm.LocalLLMServer, requests: Sequence[Request]
    ) -> dict[str, Response]:
        """A refusal for each request whose prompt fills the context (llama.cpp's server
        answers those with an HTTP 500, a numpy broadcast error, which retrying never mends)."""
        refused = {}
        for request in requests:
            messages = [{"role": m.role, "content": m.text} for m in request.messages]
            try:
                tokens = server.prompt_tokens(messages)
            except (OSError, ValueError, KeyError):  # not counted (the server died): asked as is
                return {}
            if tokens >= self._ctx:
                holds = f"the local LLM's context holds {self._ctx}"
                refused[request.key] = no_room(request.key, tokens, holds, CHANGE_CONTEXT)
        return refused

    async def aclose(self) -> None:
        client, server, self._client, self._server = self._client, self._server, None, None
        if client is not None:
            await client.aclose()
        if server is not None:
            await asyncio.to_thread(server.stop)


def _ended(server: local_llm.LocalLLMServer, grace_s: float = 1.0) -> str | None:
    """How the server ended, waiting a moment for a dying process to be gone when it does not
    answer; None if it runs (a server that answers is not waited for)."""
    if server.process.poll() is None and server.ready():
        return None
    try:
        server.process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        return None
    return server.exit_description()


def build(arg: str, options: ModelOptions) -> Model:
    if arg and arg != local_llm.MODEL_NAME:
        raise ConfigError(f"model 'local-llm:{arg}': the local LLM is {local_llm.MODEL_NAME}")
    return LocalLLM(options)
