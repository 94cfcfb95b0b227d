"""Sign-in throttling and the bound on concurrent password hashes.

`LoginThrottle` counts failed sign-ins per account name and per client address. The first
`free` failures of a key cost nothing; each further one locks the key for `base * 2**k` seconds
(k = 0, 1, 2, ...), at most `cap`; a key quiet for `forget` seconds starts again, and a success
clears the account and the client. While either key is locked a sign-in is refused before any
password is hashed, and the caller is told how long to wait (HTTP 429 with Retry-After). The
counters live in memory (one server process), at most `max_keys` of them (the oldest go first).

`HashSlots` bounds the argon2 hashes running at once (each takes 64 MiB and a core for about
50 ms): `slots` at a time, at most `queue` more waiting (without holding a worker thread) up to
`wait` seconds; beyond that a sign-in is answered "busy" (HTTP 503 with Retry-After) instead of
growing the server's memory.

Hand-written rather than a rate-limit library: those limit requests per time window, while this
needs failure counting per account and client with exponential lockout, and a hash semaphore.
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass


@dataclass
class _Failures:
    count: int = 0
    locked_until: float = 0.0
    last: float = 0.0


class _Counter:
    def __init__(self, free: int, base: float, cap: float, forget: float, max_keys: int) -> None:
        self.free, self.base, self.cap, self.forget = free, base, cap, forget
        self.max_keys = max_keys
        self.keys: OrderedDict[str, _Failures] = OrderedDict()

    def wait(self, key: str, now: float) -> float:
        found = self.keys.get(key)
        return max(0.0, found.locked_until - now) if found else 0.0

    def failed(self, key: str, now: float) -> None:
        found = self.keys.pop(key, None) or _Failures()
        if now - found.last > self.forget:
            found = _Failures()
        found.count += 1
        found.last = now
        over = found.count - self.free
        if over > 0:
            found.locked_until = now + min(self.cap, self.base * 2 ** (over - 1))
        self.keys[key] = found
        while len(self.keys) > self.max_keys:
            self.keys.popitem(last=False)

    def clear(self, key: str) -> None:
        self.keys.pop(key, None)


class LoginThrottle:
    """Failed sign-ins per account (`free` 5) and per client address (`client_free` 20)."""

    def __init__(
        self,
        free: int = 5,
        client_free: int = 20,
        base: float = 1.0,
        cap: float = 900.0,
        forget: float = 3600.0,
        max_keys: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.accounts = _Counter(free, base, cap, forget, max_keys)
        self.clients = _Counter(client_free, base, cap, forget, max_keys)
        self.clock = clock
        self._lock = threading.Lock()

    def wait(self, account: str, client: str) -> int:
        """Whole seconds until this account may be tried from this client (0: now)."""
        with self._lock:
            now = self.clock()
            left = max(self.accounts.wait(account, now), self.clients.wait(client, now))
        return math.ceil(left)

    def failed(self, account: str, client: str) -> None:
        with self._lock:
            now = self.clock()
            self.accounts.failed(account, now)
            self.clients.failed(client, now)

    def succeeded(self, account: str, client: str) -> None:
        with self._lock:
            self.accounts.clear(account)
            self.clients.clear(client)


class Busy(Exception):
    """No hash slot within the wait: the caller should try again in `retry_after` seconds."""

    retry_after = 2


class HashSlots:
    """At most `slots` hashes at once; a sign-in waits for a slot without holding a thread (an
    asyncio semaphore), at most `queue` of them, each at most `wait` seconds."""

    def __init__(self, slots: int = 2, queue: int = 64, wait: float = 30.0) -> None:
        self.slots, self.queue, self.wait = slots, queue, wait
        self._semaphore = asyncio.Semaphore(slots)
        self.waiting = 0

    @asynccontextmanager
    async def slot(self) -> AsyncIterator[None]:
        if self.waiting >= self.queue:
            raise Busy()
        self.waiting += 1
        try:
            async with asyncio.timeout(self.wait):
                await self._semaphore.acquire()
        except TimeoutError:
            raise Busy() from None
        finally:
            self.waiting -= 1
        try:
            yield
        finally:
            self._semaphore.release()
