"""Sign-in throttling and the bound on concurrent password hashes.

`LoginThrottle` counts sign-in attempts per pair of account name and client address, in the
project's database (table `sign_in_attempts`, db.py), so the counts hold across server restarts
and `vidbench annotate users unlock` can clear them from another process. An attempt is counted
BEFORE its password is hashed, in one transaction with the check, so attempts sent at once are
counted one by one like any others. A pair's first `free` attempts go ahead at once, the
`free`-th locking the pair for `base` seconds; each attempt after a lock ends locks it for twice
as long as the one before (`base * 2**k`, k = 0, 1, 2, ...), at most `cap`. A pair quiet for
`forget` seconds starts again, and a success clears it. While a pair
is locked a sign-in is refused before any password is hashed, and the caller is told how long to
wait (HTTP 429 with Retry-After). Only that pair is locked: the same client signs in to other
accounts, and the same account from other clients, as before (an address shared by many people,
a proxy's, does not lock everyone out of everything).

`HashSlots` bounds the argon2 hashes running at once (each takes 64 MiB and a core for about
50 ms): `slots` at a time, at most `queue` more waiting (without holding a worker thread) up to
`wait` seconds; beyond that a sign-in is answered "busy" (HTTP 503 with Retry-After) instead of
growing the server's memory.

Hand-written rather than a rate-limit library: those limit requests per time window, while this
needs attempt counting per account and client with exponential lockout, kept where a command can
clear it, and a hash semaphore.
"""

from __future__ import annotations

import asyncio
import math
import sqlite3
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass

from vidbench.annotate import db


@dataclass(frozen=True)
class Lock:
    """A pair's standing: attempts since its last success and until when it is locked."""

    account: str
    client: str
    attempts: int
    locked_until: float  # clock time; 0: not locked
    last: float  # the latest attempt's clock time


class LoginThrottle:
    """Sign-in attempts per (account, client): `free` (5) at once, then a lock of `base` (30 s)
    that doubles with each further attempt, at most `cap` (15 min)."""

    def __init__(
        self,
        free: int = 5,
        base: float = 30.0,
        cap: float = 900.0,
        forget: float = 3600.0,
        max_pairs: int = 10_000,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.free, self.base, self.cap, self.forget = free, base, cap, forget
        self.max_pairs = max_pairs
        self.clock = clock

    def wait(self, conn: sqlite3.Connection, account: str, client: str) -> int:
        """Whole seconds until this account may be tried from this client (0: now)."""
        found = _pair(conn, account, client)
        return 0 if found is None else math.ceil(max(0.0, found.locked_until - self.clock()))

    def begin(self, conn: sqlite3.Connection, account: str, client: str) -> int:
        """Count one attempt before its password is hashed: 0 when it may go ahead (and may
        lock the pair for the next ones), else the seconds to wait (nothing is counted)."""
        with db.transaction(conn):
            now = self.clock()
            found = _pair(conn, account, client)
            if found is not None and found.locked_until <= now and now - found.last > self.forget:
                found = None  # quiet for long enough: it starts again
            if found is not None and found.locked_until > now:
                return math.ceil(found.locked_until - now)
            attempts = 1 if found is None else found.attempts + 1
            over = attempts - self.free
            locked_until = now + min(self.cap, self.base * 2**over) if over >= 0 else 0.0
            conn.execute(
                "INSERT INTO sign_in_attempts (account, client, attempts, locked_until, last) "
                "VALUES (?, ?, ?, ?, ?) ON CONFLICT (account, client) DO UPDATE SET "
                "attempts = excluded.attempts, locked_until = excluded.locked_until, "
                "last = excluded.last",
                (account, client, attempts, locked_until, now),
            )
            if found is None:  # a new pair: forget the quiet ones, keep at most max_pairs
                conn.execute(
                    "DELETE FROM sign_in_attempts WHERE last < ? OR rowid NOT IN (SELECT rowid "
                    "FROM sign_in_attempts ORDER BY last DESC LIMIT ?)",
                    (now - self.forget - self.cap, self.max_pairs),
                )
        return 0

    def succeeded(self, conn: sqlite3.Connection, account: str, client: str) -> None:
        with db.transaction(conn):
            conn.execute(
                "DELETE FROM sign_in_attempts WHERE account = ? AND client = ?", (account, client)
            )


def _pair(conn: sqlite3.Connection, account: str, client: str) -> Lock | None:
    row = conn.execute(
        "SELECT attempts, locked_until, last FROM sign_in_attempts "
        "WHERE account = ? AND client = ?",
        (account, client),
    ).fetchone()
    return None if row is None else Lock(account, client, row[0], row[1], row[2])


def unlock(conn: sqlite3.Connection, account: str, author: str) -> list[Lock]:
    """Clear the sign-in attempts of `account` from every client (`vidbench annotate users
    unlock`): the pairs that were counted, locked or not."""
    with db.transaction(conn):
        rows = conn.execute(
            "SELECT client, attempts, locked_until, last FROM sign_in_attempts "
            "WHERE account = ? ORDER BY client",
            (account,),
        ).fetchall()
        conn.execute("DELETE FROM sign_in_attempts WHERE account = ?", (account,))
        cleared = [Lock(account, r[0], r[1], r[2], r[3]) for r in rows]
        clients = ", ".join(lock.client for lock in cleared) or "none"
        db.log_event(conn, author, "user.unlock", f"{account} (clients: {clients})")
    return cleared


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
