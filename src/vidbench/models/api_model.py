"""What every API backend shares: retries, the adaptive limiter, deadlines, preflight, secrets.

A backend says how to build its client, how to turn a Request into its wire payload (once per
request), how to send a payload and read the reply into a Response (once per attempt), and how
its exceptions map to failures. This class does everything else, the same way for all of them:

    for each attempt (1 + max_retries at most; tenacity's loop, retry.py):
        wait for a slot of the adaptive limiter
        send, with a deadline of `timeout` seconds for the whole attempt
        a reply (ok, empty, refused, blocked) -> done
        a failure -> release the slot; a 429 shrinks the limiter; a failure that is not worth
                     retrying (4xx, a spent quota, a Retry-After over the cap) ends here;
                     otherwise back off (retry.py) and go again
    out of attempts -> Response(status="error") with the last failure; a failure that sending
        again cannot fix (retry.Failure.change_first: a bad request, a refused key, an unknown
        model, a spent quota, a request too large) -> Response(status="rejected"), saying what
        to change
    a rejected key (401), refused access (403), no such model (404) or a spent quota -> every
        later call of this model fails at once with it, unsent (each would get the same answer);
        so does a server that made GIVE_UP_ROW calls in a row give up (at least `concurrency`),
        none answered in between: it is not answering (a dead or hung server would otherwise
        cost every request of the run all its attempts)
    every failed attempt that was tried again -> the Response's `retried`, kept in the store

The adaptive limiter (limiter.py) is not a tenacity feature: tenacity decides when to try
again; how many calls may be in flight across all requests is the limiter's.

`generate` never raises for a failed call; a failure is a Response with its status and message.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import time
from abc import abstractmethod
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from vidbench.console import counted
from vidbench.core.errors import ConfigError
from vidbench.core.files import Json
from vidbench.core.requests import Request, Response, ResponseStatus
from vidbench.models.api_options import ApiAccess
from vidbench.models.base import Model
from vidbench.models.limiter import AdaptiveLimiter, CallLimiter
from vidbench.models.retry import CallFailed, Failure, RetryPolicy

log = logging.getLogger("vidbench.models")

PREFLIGHT_MIN_S = 5.0  # the reachability check's shortest deadline (start())
GIVE_UP_ROW = 4  # calls in a row out of attempts (or `concurrency`, if more) that stop the rest


@dataclass
class CallStats:
    """What happened to the calls of this model object (for the bench, tests and debugging)."""

    attempts: int = 0
    failures: Counter[str] = field(default_factory=Counter)  # by failure kind, retried or not
    outcomes: Counter[str] = field(default_factory=Counter)  # by final Response status


@dataclass
class _Session:
    """A client bound to one event loop (HTTP connection pools cannot move between loops)."""

    loop: asyncio.AbstractEventLoop
    client: Any


class ApiModel(Model):
    """Base of the `openai`, `openai-compat`, `anthropic` and `gemini` backends."""

    def __init__(self, access: ApiAccess) -> None:
        settings = access.settings
        self.spec = access.spec
        self.settings = settings
        self.endpoint = access.endpoint  # the base URL, for messages
        self._api_key = access.api_key
        self.policy = RetryPolicy(settings.max_retries, settings.backoff, settings.max_backoff)
        self.limiter: CallLimiter = AdaptiveLimiter(settings.concurrency)
        self.stats = CallStats()
        self._session: _Session | None = None
        # set once every later call would fail alike (a rejected key, a server not answering):
        # the failure each is then given, unsent
        self._every_call: Failure | None = None
        self._given_up = 0  # calls in a row out of attempts, none answered since

    def __repr__(self) -> str:  # never show the key
        return f"{type(self).__name__}({self.spec!r})"

    # ------------------------------------------------------------------ backend hooks
    def answer_settings(self) -> dict[str, Json]:
        """Settings besides the spec that change answers (part of identity and store keys)."""
        return {}

    @abstractmethod
    def _make_client(self, api_key: str | None) -> Any: ...

    @abstractmethod
    async def _close_client(self, client: Any) -> None: ...

    @abstractmethod
    def _payload(self, request: Request) -> Any:
        """The request in the provider's wire format; built once, sent on every attempt."""

    @abstractmethod
    async def _send(self, client: Any, payload: Any, request: Request) -> Response:
        """One attempt; raises on failure, returns an ok/empty/refused/blocked Response."""

    @abstractmethod
    def _classify(self, exc: BaseException) -> Failure: ...

    @abstractmethod
    async def _preflight(self, client: Any) -> None:
        """A cheap call (list models) that fails when the server is unreachable or the key bad."""

    # ------------------------------------------------------------------ the Model interface
    def identity(self) -> dict[str, Json]:
        extra = self.answer_settings()
        if self.settings.jpeg_quality is not None:
            extra["jpeg_quality"] = self.settings.jpeg_quality
        return {"spec": self.spec, **extra}

    async def start(self) -> None:
        """Fail fast: an unreachable server or a rejected key stops the run before any work."""
        client = self._client()
        try:
            # at least PREFLIGHT_MIN_S: a per-attempt timeout set tight for answers must not make
            # a slow first connection (a loaded machine, a TLS handshake) look like no server
            async with asyncio.timeout(min(max(self.settings.timeout, PREFLIGHT_MIN_S), 30.0)):
                await self._preflight(client)
        except Exception as e:
            failure = self._failure(e)
            if failure.kind in ("connection", "timeout"):
                raise ConfigError(
                    f"model {self.spec!r}: cannot reach {self.endpoint} "
                    f"({failure.message}); is the server running?"
                ) from None
            if failure.status in (401, 403):
                raise ConfigError(
                    f"model {self.spec!r}: {self.endpoint} rejected the API key "
                    f"(HTTP {failure.status}: {failure.message})"
                ) from None
            log.debug("%s: preflight answered %s; going on", self.spec, failure.describe())

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        return list(await asyncio.gather(*(self._answer(r) for r in requests)))

    async def aclose(self) -> None:
        session, self._session = self._session, None
        if session is not None and session.loop is asyncio.get_running_loop():
            await self._close_client(session.client)

    # ------------------------------------------------------------------ internals
    def _client(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._session is None or self._session.loop is not loop:
            self._session = _Session(loop, self._make_client(self._api_key))
        return self._session.client

    def _failure(self, exc: BaseException) -> Failure:
        """The backend's reading of an exception, with the key cut out of its message."""
        failure = self._classify(exc)
        return dataclasses.replace(failure, message=self._redact(failure.message))

    def _redact(self, text: str) -> str:
        if self._api_key and self._api_key in text:
            text = text.replace(self._api_key, "[api key]")
        return text

    async def _answer(self, request: Request) -> Response:
        started = time.monotonic()
        try:
            payload = self._payload(request)
        except Exception as e:  # e.g. an image PIL cannot read: this request only
            unusable = Failure("client", self._redact(f"cannot build the request: {e}"))
            return self._final(request, started, unusable)
        client = self._client()
        retrying = self.policy.retrying()
        failed: list[str] = []  # every failed attempt, for the store
        try:
            async for attempt in retrying:
                with attempt:
                    try:
                        response = await self._attempt(client, payload, request)
                    except CallFailed as e:
                        failed.append(e.failure.describe())
                        raise
            latency = time.monotonic() - started
            error = None if response.error is None else f"{self.spec}: {response.error}"
            return dataclasses.replace(
                response, error=error, latency_s=latency, retried=tuple(failed)
            )
        except CallFailed as e:
            self._count_given_up(e.failure)
            attempts = retrying.statistics.get("attempt_number", 1)
            final = self._final(request, started, e.failure, attempts)
            return dataclasses.replace(final, retried=tuple(failed[:-1]))

    async def _attempt(self, client: Any, payload: Any, request: Request) -> Response:
        """One attempt in a slot of the limiter; CallFailed with the failure when it fails."""
        async with self.limiter.slot() as epoch:
            if self._every_call is not None:  # the same answer for every call: not sent
                raise CallFailed(self._every_call)
            self.stats.attempts += 1
            try:
                async with asyncio.timeout(self.settings.timeout):
                    response = await self._send(client, payload, request)
            except Exception as e:
                failure = self._failure(e)
            else:
                self.limiter.succeeded()
                self._given_up = 0
                self.stats.outcomes[response.status] += 1
                return response
        self.stats.failures[failure.kind] += 1
        if failure.for_every_call and self._every_call is None:
            said = f"not sent: an earlier call got {failure.describe()}"
            self._every_call = Failure("stopped", said, cause=failure)
        if failure.kind == "rate_limit":
            self.limiter.rate_limited(epoch)
        log.debug("%s: %s: attempt: %s", self.spec, request.sample_id, failure)
        raise CallFailed(failure)

    def _count_given_up(self, failure: Failure) -> None:
        """A call ended with `failure`: the GIVE_UP_ROW'th call in a row to run out of attempts
        stops the calls after it."""
        if failure.kind == "stopped" or not self.policy.worth_retrying(failure):
            return
        self._given_up += 1
        row = max(GIVE_UP_ROW, self.settings.concurrency)
        if self._given_up >= row and self._every_call is None:
            said = (
                f"not sent: {row} calls in a row gave up (the last: {failure.describe()}), none "
                "answered in between: the server is not answering; run again once it does"
            )
            self._every_call = Failure("stopped", said, cause=failure)

    def _final(
        self, request: Request, started: float, failure: Failure, attempts: int = 0
    ) -> Response:
        if self.policy.worth_retrying(failure):
            message = f"gave up after {counted(attempts, 'attempt')}; last: {failure.describe()}"
        elif failure.retryable:  # the server asks for a longer wait than the policy waits
            message = (
                f"{failure.describe()} (not retried: a wait over "
                f"{self.policy.max_retry_after:g} s; run again later)"
            )
        elif failure.change_first is None:  # stopped by an outage, or a cause unknown
            message = f"{failure.describe()} (not retried)"
        else:  # the same call again gets the same answer: status rejected
            message = (
                f"{failure.describe()} (not retried: sent again as it is, it gets the same "
                f"answer; change {failure.change_first} first)"
            )
        status: ResponseStatus = "error" if failure.change_first is None else "rejected"
        self.stats.outcomes[status] += 1
        return Response(
            request.key,
            None,
            error=f"{self.spec}: {message}",
            latency_s=time.monotonic() - started,
            status=status,
            change_first=failure.change_first,
        )
