"""One call in flight per key on an event loop: identical calls made at the same time wait for
the first, then read what it stored (the pattern of media/cache.FrameCache.single_flight, which
merges the frame decoding of threads; this one merges coroutines).

    async with merged.hold(key) as flight:
        stored = store.get(key)
        if stored is None and flight.failure is None:
            ... make the call; store the answer, or set flight.failure
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Hashable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field


@dataclass
class Flight:
    """One key's turn: held by one caller at a time; `failure` is what the call that went
    first ran into (so the callers that waited for it do not send the same thing again)."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    waiting: int = 0
    failure: tuple[str, str] | None = None  # (error, status) of the failed call


class SingleFlight:
    """Hand-written because functools' caches do not merge concurrent misses of coroutines and
    the result lives in the store, not in memory."""

    def __init__(self) -> None:
        self._flights: dict[Hashable, Flight] = {}

    @asynccontextmanager
    async def hold(self, key: Hashable) -> AsyncIterator[Flight]:
        flight = self._flights.setdefault(key, Flight())
        flight.waiting += 1
        try:
            async with flight.lock:
                yield flight
        finally:
            flight.waiting -= 1
            if flight.waiting == 0:  # nobody waits: a later call (the next run's) asks again
                del self._flights[key]
