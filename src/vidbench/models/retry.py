"""When a failed API call is tried again, and after how long.

A call fails with a `Failure` of one kind. Rate limits (429), server errors (5xx), timeouts
(including HTTP 408), broken connections and malformed bodies are worth another try; other 4xx
(a bad request, a bad key, content too long) are not, since sending the same thing again gives the
same answer, and neither is a spent quota (a 429 that says so: OpenAI's `insufficient_quota`).
Such a failure says what must change before the call can succeed (`Failure.change_first`: the
key, the model name, the quota, --max-tokens or the frames, the request): its call is recorded
as `rejected`, and the run's advice counts those apart from the failures a rerun retries.
Delays grow exponentially with full jitter (a uniform draw between 0 and
min(max_delay, base_delay * 2**retry)), so many clients hit by one outage do not come back in
step; a Retry-After header (or Gemini's RetryInfo), when the server sends one, is waited instead,
up to `max_retry_after`: a server that asks for a longer wait is not asked again (a retry sooner
gets the same 429). The loop itself is
tenacity's (`RetryPolicy.retrying`): an attempt raises `CallFailed`, tenacity decides whether and
when to try again.
"""

from __future__ import annotations

import email.utils
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from tenacity import (
    AsyncRetrying,
    RetryCallState,
    retry_if_exception,
    stop_after_attempt,
    wait_random_exponential,
)

from vidbench.core.requests import Response

# stopped: not sent, since an earlier failure said every call would fail (ApiModel)
FailureKind = Literal[
    "rate_limit",
    "quota",
    "server",
    "timeout",
    "connection",
    "malformed",
    "client",
    "unexpected",
    "stopped",
]
RETRYABLE: frozenset[str] = frozenset(
    {"rate_limit", "server", "timeout", "connection", "malformed"}
)
# How an API names a request too large for it (OpenAI's "maximum context length", "max_tokens is
# too large", Anthropic's "prompt is too long" and 413 request_too_large, Gemini's "input token
# count ... exceeds"): fewer frames or a smaller --max-tokens is the change.
_TOO_LARGE = re.compile(
    r"context.length|too (large|long|many)|exceeds|max_tokens|maximum .*tokens", re.IGNORECASE
)
# What a failure a rerun cannot fix says must change (`Failure.change_first`): its Response
# carries it (`Response.change_first`), the store keeps it with the failure, and the run's advice
# counts the calls by it.
CHANGE_KEY = "the API key (or its access)"
CHANGE_QUOTA = "the quota (the account's billing or plan)"
CHANGE_MODEL = "the model name (or endpoint)"
CHANGE_SIZE = "--max-tokens or the frames (a smaller request)"
CHANGE_REQUEST = "the request (the server refused it)"
CHANGE_INPUT = "the sample's input (the request could not be built)"
CHANGE_FRAMES = "the frames (what the model's image or video input takes)"
CHANGE_ENGINE = "the engine's settings (--model-opt)"


@dataclass(frozen=True)
class Failure:
    """Why one attempt failed. `status` is the HTTP status when there was one."""

    kind: FailureKind
    message: str
    status: int | None = None
    retry_after: float | None = None
    cause: Failure | None = None  # stopped: the failure that stopped every call after it

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE

    @property
    def change_first(self) -> str | None:
        """What must change before this call can succeed, when sending it again as it is gets
        the same answer (a bad request, a refused key, an unknown model, a spent quota, a
        request too large); None when a rerun as it is may succeed (a timeout, a server error,
        an outage, a cause unknown). The one place that decides which failed calls a rerun
        retries."""
        if self.cause is not None:
            return self.cause.change_first
        if self.retryable or self.kind in ("unexpected", "stopped"):
            return None
        if self.kind == "quota":
            return CHANGE_QUOTA
        if self.status is None:  # never sent: the request could not be built (an image)
            return CHANGE_INPUT
        if self.status in (401, 403):
            return CHANGE_KEY
        if self.status == 404:
            return CHANGE_MODEL
        if self.status == 413 or _TOO_LARGE.search(self.message):
            return CHANGE_SIZE
        return CHANGE_REQUEST

    @property
    def for_every_call(self) -> bool:
        """Whether every later call to this model would fail alike: the key is rejected (401),
        access refused (403), no such model or endpoint (404), the quota spent."""
        return self.kind == "quota" or self.status in (401, 403, 404)

    def describe(self) -> str:
        wait = "" if self.retry_after is None else f" (Retry-After: {self.retry_after:g} s)"
        if self.status is None:
            return f"{self.kind}: {self.message}{wait}"
        return f"{self.kind}: HTTP {self.status}: {self.message}{wait}"


def rejected(key: str, problem: str, change: str) -> Response:
    """The answer to a request a local model refuses before generating (frames it cannot take):
    status rejected, saying what to change first, as an API's refusal does (a rerun as it is
    gets the same)."""
    error = f"{problem} (change {change} first)"
    return Response(key, None, error=error, status="rejected", change_first=change)


def no_room(key: str, tokens: int, context: str, change: str) -> Response:
    """`rejected`: a prompt of `tokens` tokens that fills the model's context (`context`: what
    holds how many, e.g. "the model's context holds 4096 (max_position_embeddings)")."""
    problem = f"the prompt is {tokens} tokens, and {context}: no room is left to answer"
    return rejected(key, problem, change)


class CallFailed(Exception):
    """One attempt failed, and why (raised inside the retry loop)."""

    def __init__(self, failure: Failure) -> None:
        super().__init__(failure.describe())
        self.failure = failure


@dataclass(frozen=True)
class RetryPolicy:
    max_retries: int = 6
    base_delay: float = 1.0
    max_delay: float = 60.0
    max_retry_after: float = 300.0  # a server asking for a longer wait is not asked again

    def worth_retrying(self, failure: Failure) -> bool:
        """A retryable failure, unless the server asks for a wait over `max_retry_after`."""
        too_long = failure.retry_after is not None and failure.retry_after > self.max_retry_after
        return failure.retryable and not too_long

    def wait(self, state: RetryCallState) -> float:
        """Seconds to wait after the attempt `state` describes: the server's Retry-After (capped)
        when it sent one, else full jitter up to min(max_delay, base_delay * 2**retry)."""
        error = state.outcome.exception() if state.outcome is not None else None
        if isinstance(error, CallFailed) and error.failure.retry_after is not None:
            return min(max(0.0, error.failure.retry_after), self.max_retry_after)
        return wait_random_exponential(multiplier=self.base_delay, max=self.max_delay)(state)

    def retrying(self) -> AsyncRetrying:
        """The retry loop of one call: at most 1 + max_retries attempts, retryable failures
        only; the last CallFailed is raised when it gives up."""
        return AsyncRetrying(
            stop=stop_after_attempt(self.max_retries + 1),
            wait=self.wait,
            retry=retry_if_exception(
                lambda error: isinstance(error, CallFailed) and self.worth_retrying(error.failure)
            ),
            reraise=True,
        )


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """The wait a response asks for: `retry-after-ms`, or `retry-after` in seconds or as an
    HTTP date. None when absent or unreadable."""
    if not headers:
        return None
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return float(millis) / 1000.0
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return float(value)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())


def from_status(
    status: int,
    message: str,
    headers: Mapping[str, str] | None = None,
    body_wait: float | None = None,
) -> Failure:
    """The failure an HTTP error status means; `body_wait`: the wait the body asks for (Gemini's
    RetryInfo), used when the headers ask none."""
    retry_after = retry_after_seconds(headers)
    if retry_after is None:
        retry_after = body_wait
    if status == 429:
        return Failure("rate_limit", message, status, retry_after)
    if status == 408:
        return Failure("timeout", message, status, retry_after)
    if status >= 500:
        return Failure("server", message, status, retry_after)
    return Failure("client", message, status)
