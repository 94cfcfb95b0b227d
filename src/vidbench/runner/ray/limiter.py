"""One limiter for an API model's calls from all Ray workers of a run.

`LimiterActor` holds the run's AdaptiveLimiter (models/limiter.py: calls in flight, halved on a
429 and grown back) and, optionally, a pace of calls started per second; every worker's model
takes its slots through a `SharedLimiter`, which has the interface ApiModel uses. Each call costs
two small actor messages (about a millisecond), nothing next to an API call's seconds.
"""

from __future__ import annotations

import asyncio
import time
from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

import ray

from vidbench.models.limiter import AdaptiveLimiter

if TYPE_CHECKING:  # Ray is read untyped (pyproject: [tool.mypy]): these name its types
    from ray import ObjectRef
    from ray.actor import ActorHandle


class WorkerForgotten(Exception):
    """A slot asked for by a worker the driver has declared dead: never granted."""


@ray.remote(num_cpus=0)
class LimiterActor:
    """Slots are counted per worker name. `forget(name)` frees a dead worker's slots and refuses
    it for good: its `acquire` calls still waiting here, or arriving later, get no slot (a late
    grant would be held for ever and starve the live workers)."""

    def __init__(self, ceiling: int, per_second: float | None = None) -> None:
        self.limiter = AdaptiveLimiter(ceiling)
        self.interval = 1.0 / per_second if per_second else 0.0
        self.next_start = 0.0
        self.granted = 0
        self.refused = 0  # acquires of forgotten workers
        self.held: Counter[str] = Counter()  # slots by worker, freed when a worker dies
        self.forgotten: set[str] = set()

    async def acquire(self, owner: str) -> int:
        self._refuse_if_forgotten(owner)
        epoch = await self.limiter.acquire()
        if owner in self.forgotten:  # forgotten while it waited: the slot goes on at once
            self.limiter.release()
            self._refuse_if_forgotten(owner)
        self.held[owner] += 1
        if self.interval:
            now = time.monotonic()
            start = max(now, self.next_start)
            self.next_start = start + self.interval
            await asyncio.sleep(start - now)
            self._refuse_if_forgotten(owner)  # forgotten while paced: `forget` freed the slot
        self.granted += 1
        return epoch

    def _refuse_if_forgotten(self, owner: str) -> None:
        if owner in self.forgotten:
            self.refused += 1
            raise WorkerForgotten(f"Ray worker {owner} was declared dead: no call slot for it")

    def release(self, owner: str) -> None:
        if self.held[owner] > 0:  # nothing after `forget`
            self.held[owner] -= 1
            self.limiter.release()

    def forget(self, owner: str) -> int:
        """Free the slots a dead worker held (its calls will never say they ended) and refuse
        it any slot from now on."""
        self.forgotten.add(owner)
        held = self.held.pop(owner, 0)
        for _ in range(held):
            self.limiter.release()
        return held

    def succeeded(self) -> None:
        self.limiter.succeeded()

    def rate_limited(self, epoch: int) -> None:
        self.limiter.rate_limited(epoch)

    def stats(self) -> dict[str, float]:
        limiter = self.limiter
        return {
            "granted": self.granted,
            "refused": self.refused,
            "in_flight": limiter.in_flight,
            "limit": limiter.limit,
        }


class SharedLimiter:
    """A worker's view of the LimiterActor, with AdaptiveLimiter's interface."""

    def __init__(self, actor: ActorHandle, owner: str) -> None:
        self.actor = actor
        self.owner = owner
        self._returning: set[asyncio.Future[None]] = set()  # slots granted to cancelled calls

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[int]:
        ref = self.actor.acquire.remote(self.owner)
        try:
            epoch = await ref
        except asyncio.CancelledError:  # granted later all the same: hand that slot back
            returning = asyncio.ensure_future(self._release_when_granted(ref))
            self._returning.add(returning)
            returning.add_done_callback(self._returning.discard)
            raise
        try:
            yield epoch
        finally:
            self.actor.release.remote(self.owner)

    async def _release_when_granted(self, ref: ObjectRef) -> None:
        await ref
        self.actor.release.remote(self.owner)

    def succeeded(self) -> None:
        self.actor.succeeded.remote()

    def rate_limited(self, epoch: int) -> None:
        self.actor.rate_limited.remote(epoch)
