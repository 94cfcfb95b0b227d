"""Coalesce concurrent `generate()` calls into device batches, prepared ahead on the CPU while
the device runs the current one.

The runner hands a local model `batch_size` requests per call from each of `--concurrency`
workers, so calls often arrive with fewer requests than a batch holds, and several at once. A
`DeviceBatcher` queues them and cuts batches of up to `max_batch` requests that share a group key
(e.g. the same generation settings). Each batch goes through two stages: `prepare` (CPU work: chat
template, image decoding, the processor) in a pool of threads sized to the cores, and `run` (the
device) in one thread, one batch at a time. Up to `depth` batches are prepared ahead, so while
the device generates batch i, batches i+1.. are being prepared: the device does not wait for the
CPU when preparing is faster than generating. Outputs do not depend on the overlap: a batch is
the same batch, prepared the same way, whenever it is prepared.

`timing` adds up the seconds spent in each stage, for results.json's device share.
"""

from __future__ import annotations

import asyncio
import os
import time
from collections import deque
from collections.abc import Callable, Hashable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any

from vidbench.core.requests import Request, Response
from vidbench.core.threads import in_own_thread

Prepare = Callable[[Sequence[Request]], Any]
RunBatch = Callable[[Any], list[Response]]


def _as_is(requests: Sequence[Request]) -> Sequence[Request]:
    return requests


@dataclass
class BatchTiming:
    """Seconds summed over batches: preparing (CPU) and running (the device)."""

    prepare_s: float = 0.0
    device_s: float = 0.0
    batches: int = 0

    def as_dict(self) -> dict[str, float | int]:
        return {
            "prepare_s": round(self.prepare_s, 3),
            "device_s": round(self.device_s, 3),
            "batches": self.batches,
        }


@dataclass
class _Pending:
    request: Request
    future: asyncio.Future[Response]


@dataclass
class _Ahead:
    batch: list[_Pending]
    prepared: asyncio.Future[Any]  # what `prepare` makes of the batch


class DeviceBatcher:
    """`run` is blocking (it owns the device) and must return one Response per request; so is
    `prepare` (default: the requests as they are).

    If either raises, every request of that batch is answered with an error Response carrying
    the exception, so a failed batch never stops the run.

    `leave_when_cancelled`: a cancelled run (Ctrl-C) does not wait for the batch on the device
    (core/threads.py: nothing of it would be saved, and the process ends at once); only for a
    backend that holds nothing that must be stopped at exit (vLLM's engine processes are).
    """

    def __init__(
        self,
        run: RunBatch,
        max_batch: int,
        group_key: Callable[[Request], Hashable] = lambda r: r.generation,
        prepare: Prepare = _as_is,
        prepare_workers: int | None = None,
        leave_when_cancelled: bool = False,
    ) -> None:
        self._run = run
        self._leave = leave_when_cancelled
        self._prepare = prepare
        self._max_batch = max(1, max_batch)
        self._group_key = group_key
        self._workers = max(1, prepare_workers or os.cpu_count() or 1)
        self._depth = self._workers + 1  # batches prepared ahead of the device
        self._pool: ThreadPoolExecutor | None = None
        self._pending: list[_Pending] = []
        self._worker: asyncio.Task[None] | None = None
        self.timing = BatchTiming()

    async def submit(self, requests: Sequence[Request]) -> list[Response]:
        loop = asyncio.get_running_loop()
        items = [_Pending(r, loop.create_future()) for r in requests]
        self._pending.extend(items)
        if self._worker is None or self._worker.done():
            self._worker = loop.create_task(self._drain())
        return list(await asyncio.gather(*(item.future for item in items)))

    def _next_batch(self) -> list[_Pending]:
        key = self._group_key(self._pending[0].request)
        batch: list[_Pending] = []
        rest: list[_Pending] = []
        for item in self._pending:
            if len(batch) < self._max_batch and self._group_key(item.request) == key:
                batch.append(item)
            else:
                rest.append(item)
        self._pending = rest
        return batch

    def _timed_prepare(self, requests: Sequence[Request]) -> Any:
        start = time.perf_counter()
        try:
            return self._prepare(requests)
        finally:
            self.timing.prepare_s += time.perf_counter() - start

    def _timed_run(self, prepared: Any) -> list[Response]:
        start = time.perf_counter()
        try:
            return self._run(prepared)
        finally:
            self.timing.device_s += time.perf_counter() - start
            self.timing.batches += 1

    def _cut(self, ahead: deque[_Ahead]) -> None:
        """Start preparing batches: full ones up to the depth, or one as it is when the device
        would otherwise wait (nothing prepared ahead)."""
        loop = asyncio.get_running_loop()
        if self._pool is None:
            self._pool = ThreadPoolExecutor(self._workers, thread_name_prefix="prepare")
        while self._pending and len(ahead) < self._depth:
            if ahead and len(self._pending) < self._max_batch:
                break  # a partial batch waits for more requests while the device is busy
            batch = self._next_batch()
            requests = [item.request for item in batch]
            future = loop.run_in_executor(self._pool, self._timed_prepare, requests)
            ahead.append(_Ahead(batch, future))

    async def _drain(self) -> None:
        ahead: deque[_Ahead] = deque()
        while self._pending or ahead:
            # let every worker that is ready hand over its requests before a batch is cut
            await asyncio.sleep(0)
            self._cut(ahead)
            current = ahead.popleft()
            requests = [item.request for item in current.batch]
            try:
                prepared = await current.prepared
                self._cut(ahead)  # requests that came meanwhile start preparing now
                run = partial(self._timed_run, prepared)
                responses = await (in_own_thread(run) if self._leave else asyncio.to_thread(run))
                if len(responses) != len(current.batch):
                    raise RuntimeError(
                        f"backend returned {len(responses)} responses for {len(requests)} requests"
                    )
            except Exception as e:  # one failed batch must not stop the run: record it
                responses = [
                    Response(r.key, None, error=f"{type(e).__name__}: {e}") for r in requests
                ]
            for item, response in zip(current.batch, responses, strict=True):
                if not item.future.done():
                    item.future.set_result(response)

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
            self._pool = None
