"""A stand-in model for scale-out benchmarks: a fixed latency per request and a fixed number of
requests served at once per replica (a GPU's batch, an endpoint's concurrency), no frames.

    python:vidbench.testing.standin_model:StandIn

The `python:` spec builds it with no arguments, so it reads its settings from the environment
(a Ray worker inherits them from the process that started the cluster):
VIDBENCH_STANDIN_LATENCY (seconds, default 0.25) and VIDBENCH_STANDIN_CAPACITY (default 8).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence

from vidbench.core.requests import Request, Response
from vidbench.models.base import Model

LATENCY_ENV = "VIDBENCH_STANDIN_LATENCY"
CAPACITY_ENV = "VIDBENCH_STANDIN_CAPACITY"


class StandIn(Model):
    spec = "python:vidbench.testing.standin_model:StandIn"
    needs_frames = False  # the bench measures scheduling, not decoding

    def __init__(self) -> None:
        self.latency = float(os.environ.get(LATENCY_ENV, "0.25"))
        self.capacity = int(os.environ.get(CAPACITY_ENV, "8"))
        self._slots: asyncio.Semaphore | None = None  # made on the loop that serves

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        if self._slots is None:
            self._slots = asyncio.Semaphore(self.capacity)
        async with self._slots:
            await asyncio.sleep(self.latency)
        return [Response(r.key, "(A)", latency_s=self.latency) for r in requests]
