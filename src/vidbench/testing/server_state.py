"""The fake server's bookkeeping: the fault plan, counters and recorded requests.

Request handlers run on the server's event loop thread while tests read the counters from
theirs, so every access goes through one lock.
"""

from __future__ import annotations

import hashlib
import random
import threading
from collections import Counter
from dataclasses import dataclass, field

from pydantic import JsonValue

FAULT_KINDS = (
    "429", "500", "timeout", "malformed", "disconnect", "400", "bad-utf8", "non-text"
)  # fmt: skip


@dataclass(frozen=True)
class FaultPlan:
    """Which arriving requests fail, and how. `script` faults hit the first requests in order
    ("" for no fault), then each later request fails with probability `rate`, its kind drawn
    from `kinds`; one seeded generator makes the sequence the same on every run."""

    rate: float = 0.0
    kinds: tuple[str, ...] = ("429", "500", "timeout", "malformed")
    seed: int = 0
    script: tuple[str, ...] = ()
    hang_s: float = 30.0  # a "timeout" fault holds its request this long at most

    def __post_init__(self) -> None:
        unknown = {k for k in (*self.kinds, *self.script) if k} - set(FAULT_KINDS)
        if unknown:
            raise ValueError(f"unknown fault kinds {sorted(unknown)}; known: {FAULT_KINDS}")
        if not 0.0 <= self.rate <= 1.0:
            raise ValueError(f"fault rate {self.rate} is outside 0..1")


@dataclass(frozen=True)
class ServerStats:
    received: int  # requests that arrived (faulty ones included)
    served: int  # good answers sent
    faults: dict[str, int]  # injected faults by kind, plus "capacity" 429s when queue=False
    in_flight: int
    max_in_flight: int  # most requests open at the server at once (waiting in line included)
    max_serving: int  # most requests being served at once (at most `capacity`)
    distinct_prompts: int
    max_sends_per_prompt: int
    resent_after_answer: int  # requests that arrived again after a good answer: must stay 0


@dataclass
class ServerState:
    faults: FaultPlan
    record: bool
    lock: threading.Lock = field(default_factory=threading.Lock)
    requests: list[dict[str, JsonValue]] = field(default_factory=list)
    sends: Counter[str] = field(default_factory=Counter)
    answered: Counter[str] = field(default_factory=Counter)
    fault_counts: Counter[str] = field(default_factory=Counter)
    received: int = 0
    served: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    serving: int = 0
    max_serving: int = 0
    resent: int = 0
    offset: int = 0  # arrivals before the current fault plan was set

    def __post_init__(self) -> None:
        self.rng = random.Random(self.faults.seed)

    def arrive(self, body: dict[str, JsonValue], key: str) -> tuple[int, str]:
        with self.lock:
            n = self.received
            self.received += 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            if self.record:
                self.requests.append(body)
            if self.answered[key]:
                self.resent += 1
            self.sends[key] += 1
            fault = self._draw(n)
            if fault:
                self.fault_counts[fault] += 1
            return n, fault

    def _draw(self, n: int) -> str:
        plan = self.faults
        if n - self.offset < len(plan.script):
            return plan.script[n - self.offset]
        if plan.rate and self.rng.random() < plan.rate:
            return self.rng.choice(plan.kinds)
        return ""

    def serve(self, delta: int) -> None:
        with self.lock:
            self.serving += delta
            self.max_serving = max(self.max_serving, self.serving)

    def leave(self, key: str, answered: bool) -> None:
        with self.lock:
            self.in_flight -= 1
            if answered:
                self.served += 1
                self.answered[key] += 1

    def count(self, kind: str) -> None:
        with self.lock:
            self.fault_counts[kind] += 1

    def stats(self) -> ServerStats:
        with self.lock:
            return ServerStats(
                received=self.received,
                served=self.served,
                faults=dict(self.fault_counts),
                in_flight=self.in_flight,
                max_in_flight=self.max_in_flight,
                max_serving=self.max_serving,
                distinct_prompts=len(self.sends),
                max_sends_per_prompt=max(self.sends.values(), default=0),
                resent_after_answer=self.resent,
            )


def body_key(raw: bytes) -> str:
    """What identifies a request: its body's bytes (a client serialises the same request the
    same way every time; hashing the bytes keeps the server cheap under load)."""
    return hashlib.sha256(raw).hexdigest()[:24]
