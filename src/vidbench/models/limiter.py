"""An adaptive cap on calls in flight: additive increase, multiplicative decrease (AIMD).

The runner already keeps at most `--concurrency` calls open. A server that answers 429 says it
wants fewer: the limiter halves the calls it lets through, then gives one more slot back per
"window" of successes (limit += 1/limit per success), up to the ceiling again, as TCP does with
its congestion window. Only one decrease happens per window: a 429 for a call that started
before the last decrease says nothing new about the reduced limit.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Protocol


class CallLimiter(Protocol):
    """What an API model asks of its limiter: this one, or a cluster's shared one
    (runner/ray/limiter.SharedLimiter)."""

    def slot(self) -> AbstractAsyncContextManager[int]: ...

    def succeeded(self) -> None: ...

    def rate_limited(self, epoch: int) -> None: ...


class AdaptiveLimiter:
    def __init__(self, ceiling: int, floor: int = 1, decrease: float = 0.5) -> None:
        if ceiling < 1:
            raise ValueError("the limiter's ceiling must be at least 1")
        self.ceiling = ceiling
        self.floor = max(1, min(floor, ceiling))
        self.decrease = decrease
        self.limit = float(ceiling)
        self.lowest = float(ceiling)  # the smallest limit reached (for reports and tests)
        self.decreases = 0
        self.in_flight = 0
        self.epoch = 0  # counts decreases; a call remembers the epoch it started in
        self._waiters: deque[asyncio.Future[None]] = deque()

    @property
    def allowed(self) -> int:
        """Calls that may be in flight now."""
        return max(self.floor, int(self.limit))

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[int]:
        """Hold one call slot; yields the epoch to pass to `rate_limited`."""
        await self._acquire()
        try:
            yield self.epoch
        finally:
            self._release()

    async def acquire(self) -> int:
        """Take a slot without a context manager (a limiter shared across processes,
        runner/ray/limiter.py); give it back with `release`. Returns the epoch."""
        await self._acquire()
        return self.epoch

    def release(self) -> None:
        self._release()

    def succeeded(self) -> None:
        before = self.allowed
        self.limit = min(float(self.ceiling), self.limit + 1.0 / self.limit)
        if self.allowed > before:
            self._wake()

    def rate_limited(self, epoch: int) -> None:
        """A call that started in `epoch` got a 429: shrink, once per window."""
        if epoch != self.epoch:
            return
        self.epoch += 1
        self.decreases += 1
        self.limit = max(float(self.floor), self.limit * self.decrease)
        self.lowest = min(self.lowest, self.limit)

    async def _acquire(self) -> None:
        if self.in_flight < self.allowed and not self._waiters:
            self.in_flight += 1
            return
        waiter = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        try:
            await waiter  # _wake counted us in before waking us
        except asyncio.CancelledError:
            if waiter.done() and not waiter.cancelled():
                self._release()  # granted, then cancelled: hand the slot on
            elif waiter in self._waiters:
                self._waiters.remove(waiter)
            raise

    def _release(self) -> None:
        self.in_flight -= 1
        self._wake()

    def _wake(self) -> None:
        while self._waiters and self.in_flight < self.allowed:
            waiter = self._waiters.popleft()
            if not waiter.done():
                self.in_flight += 1
                waiter.set_result(None)
