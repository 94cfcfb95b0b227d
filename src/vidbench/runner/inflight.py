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

# a failed call's status, message and what must change first (runner/store.FailedCall)
Failed = tuple[str, str, str | None]


@dataclass
class Flight:
    """One key's turn: held by one caller at a time; `failure` is what the call that went
    first ran into (so the callers that waited for it do not send the same thing again)."""

    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    waiting: int = 0
    failure: Failed | None = None


class SingleFlight:
    """Hand-written because functools' caches do not merge concurrent misses of coroutines and
    the result lives in the store, not in memory.

    A key whose call failed keeps its failure for as long as this object lives (one stage's
    calls): an identical call made later, when nobody waits on the first any more, gets the
    same failure rather than sending the call again, so what is sent does not depend on how far
    apart identical calls come (the calls of a stream are taken a few at a time). A new object
    (the next stage's, the next run's) asks again."""

    def __init__(self) -> None:
        self._flights: dict[Hashable, Flight] = {}
        self._failed: dict[Hashable, Failed] = {}  # the failed keys only

    @asynccontextmanager
    async def hold(self, key: Hashable) -> AsyncIterator[Flight]:
        flight = self._flights.get(key)
        if flight is None:
            flight = self._flights[key] = Flight(failure=self._failed.get(key))
        flight.waiting += 1
        try:
            async with flight.lock:
                yield flight
        finally:
            flight.waiting -= 1
            if flight.failure is not None:
                self._failed[key] = flight.failure
            if flight.waiting == 0:  # nobody waits: the flight goes, a failure stays
                del self._flights[key]
