"""Coalesce concurrent `generate()` calls into device batches run one at a time in a worker thread.

The runner hands a local model `batch_size` requests per call from each of `--concurrency`
workers, so calls often arrive with fewer requests than a batch holds, and several at once. A
`DeviceBatcher` queues them, cuts batches of up to `max_batch` requests that share a group key
(e.g. the same generation settings) and runs each batch with `asyncio.to_thread`: the device is
used by one batch at a time, full batches form whatever the concurrency, and the event loop stays
free to decode and encode frames meanwhile.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass

from vidbench.core.requests import Request, Response

RunBatch = Callable[[Sequence[Request]], list[Response]]


@dataclass
class _Pending:
    request: Request
    future: asyncio.Future[Response]


class DeviceBatcher:
    """`run_batch` is blocking (it owns the device); it must return one Response per request.

    If it raises, every request of that batch is answered with an error Response carrying the
    exception, so a failed batch never stops the run.
    """

    def __init__(
        self,
        run_batch: RunBatch,
        max_batch: int,
        group_key: Callable[[Request], Hashable] = lambda r: r.generation,
    ) -> None:
        self._run_batch = run_batch
        self._max_batch = max(1, max_batch)
        self._group_key = group_key
        self._pending: list[_Pending] = []
        self._worker: asyncio.Task[None] | None = None

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

    async def _drain(self) -> None:
        while self._pending:
            # let every worker that is ready hand over its requests before a batch is cut
            await asyncio.sleep(0)
            batch = self._next_batch()
            requests = [item.request for item in batch]
            try:
                responses = await asyncio.to_thread(self._run_batch, requests)
                if len(responses) != len(batch):
                    raise RuntimeError(
                        f"backend returned {len(responses)} responses for {len(batch)} requests"
                    )
            except Exception as e:  # one failed batch must not stop the run: record it
                responses = [
                    Response(r.key, None, error=f"{type(e).__name__}: {e}") for r in requests
                ]
            for item, response in zip(batch, responses, strict=True):
                if not item.future.done():
                    item.future.set_result(response)
