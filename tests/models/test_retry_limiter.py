"""The shared retry policy and the adaptive (AIMD) limiter, on their own."""

from __future__ import annotations

import asyncio
from email.utils import formatdate

import pytest

from vidbench.models.limiter import AdaptiveLimiter
from vidbench.models.retry import (
    CHANGE_INPUT,
    CHANGE_KEY,
    CHANGE_MODEL,
    CHANGE_QUOTA,
    CHANGE_REQUEST,
    CHANGE_SIZE,
    CallFailed,
    Failure,
    RetryPolicy,
    from_status,
    retry_after_seconds,
)


def test_statuses_map_to_retryable_kinds() -> None:
    assert from_status(429, "slow down").kind == "rate_limit"
    assert from_status(408, "late").kind == "timeout"
    assert from_status(503, "down").kind == "server"
    assert from_status(529, "overloaded").kind == "server"
    for status in (400, 401, 403, 404, 413, 422):
        failure = from_status(status, "no")
        assert failure.kind == "client" and not failure.retryable


def test_retry_after_forms() -> None:
    assert retry_after_seconds({"retry-after": "3"}) == 3.0
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    in_a_while = retry_after_seconds({"retry-after": formatdate(usegmt=True)})
    assert in_a_while is not None and 0.0 <= in_a_while < 2.0
    assert retry_after_seconds({"retry-after": "whenever"}) is None
    assert retry_after_seconds({}) is None
    assert from_status(429, "x", {"retry-after": "2"}).retry_after == 2.0


def _waits(policy: RetryPolicy, failure: Failure) -> list[float]:
    """The waits tenacity's loop makes for a call that fails with `failure` every time."""
    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)

    async def go() -> None:
        retrying = policy.retrying()
        retrying.sleep = record  # the waits, not the waiting
        with pytest.raises(CallFailed):
            async for attempt in retrying:
                with attempt:
                    raise CallFailed(failure)

    asyncio.run(go())
    return waits


def test_backoff_is_exponential_with_full_jitter_and_capped() -> None:
    policy = RetryPolicy(max_retries=6, base_delay=1.0, max_delay=8.0)
    runs = [_waits(policy, Failure("server", "500")) for _ in range(200)]
    assert {len(waits) for waits in runs} == {6}  # 7 attempts, 6 waits between them
    for retry, cap in enumerate((1, 2, 4, 8, 8, 8)):
        delays = [waits[retry] for waits in runs]
        assert all(0.0 <= d <= cap for d in delays)
        assert max(delays) > 0.8 * cap  # spread over the whole range (full jitter)


def test_retry_after_wins_over_backoff_up_to_the_cap() -> None:
    policy = RetryPolicy(max_retries=2, max_retry_after=30.0)
    assert _waits(policy, Failure("rate_limit", "x", 429, retry_after=2.5)) == [2.5, 2.5]
    assert _waits(policy, Failure("rate_limit", "x", 429, retry_after=30.0)) == [30.0, 30.0]
    # a longer wait asked for is not waited in part: a retry sooner gets the same 429
    assert _waits(policy, Failure("rate_limit", "x", 429, retry_after=1e6)) == []
    assert _waits(policy, Failure("server", "x", 503, retry_after=31.0)) == []


def test_a_spent_quota_is_not_retried() -> None:
    assert _waits(RetryPolicy(max_retries=6), Failure("quota", "insufficient_quota", 429)) == []


def test_a_client_error_is_not_retried() -> None:
    assert _waits(RetryPolicy(max_retries=6), Failure("client", "400 bad request", 400)) == []


def test_limiter_halves_once_per_window_and_grows_back() -> None:
    limiter = AdaptiveLimiter(16)
    limiter.rate_limited(epoch=0)
    assert limiter.allowed == 8 and limiter.epoch == 1
    limiter.rate_limited(epoch=0)  # started before the decrease: says nothing new
    assert limiter.allowed == 8
    limiter.rate_limited(epoch=1)
    assert limiter.allowed == 4 and limiter.decreases == 2 and limiter.lowest == 4
    for _ in range(200):
        limiter.succeeded()
    assert limiter.allowed == 16  # back to the ceiling, never above it


def test_limiter_never_goes_below_its_floor() -> None:
    limiter = AdaptiveLimiter(4)
    for epoch in range(10):
        limiter.rate_limited(epoch)
    assert limiter.allowed == 1


def test_limiter_holds_calls_and_wakes_them_as_slots_free() -> None:
    async def scenario() -> list[int]:
        limiter = AdaptiveLimiter(4)
        limiter.rate_limited(0)  # 2 allowed
        seen: list[int] = []

        async def call() -> None:
            async with limiter.slot():
                seen.append(limiter.in_flight)
                await asyncio.sleep(0.01)

        await asyncio.gather(*(call() for _ in range(10)))
        assert limiter.in_flight == 0
        return seen

    assert max(asyncio.run(scenario())) == 2


def test_limiter_growth_lets_waiting_calls_in() -> None:
    async def scenario() -> int:
        limiter = AdaptiveLimiter(3)
        limiter.rate_limited(0)  # 1 allowed
        release = asyncio.Event()
        peak = 0

        async def call() -> None:
            nonlocal peak
            async with limiter.slot():
                peak = max(peak, limiter.in_flight)
                await release.wait()

        tasks = [asyncio.create_task(call()) for _ in range(3)]
        await asyncio.sleep(0.01)
        assert limiter.in_flight == 1
        for _ in range(20):
            limiter.succeeded()
        await asyncio.sleep(0.01)
        release.set()
        await asyncio.gather(*tasks)
        return peak

    assert asyncio.run(scenario()) == 3


def test_cancelled_waiters_give_their_slot_back() -> None:
    async def scenario() -> AdaptiveLimiter:
        limiter = AdaptiveLimiter(1)
        gate = asyncio.Event()

        async def call() -> None:
            async with limiter.slot():
                await gate.wait()

        first = asyncio.create_task(call())
        waiting = [asyncio.create_task(call()) for _ in range(3)]
        await asyncio.sleep(0.01)
        for task in waiting:
            task.cancel()
        gate.set()
        await first
        for task in waiting:
            with pytest.raises(asyncio.CancelledError):
                await task
        async with limiter.slot():  # still usable
            pass
        return limiter

    limiter = asyncio.run(scenario())
    assert limiter.in_flight == 0 and not limiter._waiters


@pytest.mark.parametrize(
    ("failure", "change"),
    [
        (from_status(500, "overloaded"), None),
        (from_status(429, "slow down"), None),
        (Failure("timeout", "no reply"), None),
        (Failure("unexpected", "KeyError('x')"), None),
        (from_status(401, "invalid key"), CHANGE_KEY),
        (from_status(403, "no access"), CHANGE_KEY),
        (from_status(404, "no such model"), CHANGE_MODEL),
        (Failure("quota", "insufficient_quota", 429), CHANGE_QUOTA),
        (from_status(413, "request_too_large"), CHANGE_SIZE),
        (from_status(400, "prompt is too long: 300000 tokens"), CHANGE_SIZE),
        (from_status(400, "invalid image"), CHANGE_REQUEST),
        (Failure("client", "cannot build the request: not a JPEG"), CHANGE_INPUT),
        # not sent: as its cause (a refused key; an outage of calls that gave up)
        (Failure("stopped", "not sent", cause=from_status(401, "invalid key")), CHANGE_KEY),
        (Failure("stopped", "not sent", cause=from_status(503, "down")), None),
    ],
)
def test_what_must_change_before_a_failed_call_can_succeed(
    failure: Failure, change: str | None
) -> None:
    assert failure.change_first == change
