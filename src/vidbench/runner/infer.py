"""The `infer` stage: prepare frames, build requests, call the model, store every answer.

Frames are prepared in a thread pool (PyAV decodes outside the GIL) while up to `concurrency`
model calls are in flight. Requests already answered in the store are skipped, so a rerun makes no
model call and a killed run continues where it stopped.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from vidbench.core.errors import DataError
from vidbench.core.records import Sample
from vidbench.core.requests import Request, Response, Usage
from vidbench.media.cache import FrameCache
from vidbench.media.frame import Frame
from vidbench.media.frames import load_frames
from vidbench.models.base import Model
from vidbench.progress import progress_bar
from vidbench.runner.keys import prompt_hash, request_key
from vidbench.runner.store import Store
from vidbench.tasks.base import Task


@dataclass
class InferStats:
    planned: int = 0
    reused: int = 0  # answered by an earlier run: no model call
    answered: int = 0  # answered now
    failed: int = 0
    usage: Usage = field(default_factory=Usage)


@dataclass(frozen=True)
class _Prepared:
    sample: Sample
    request: Request
    record: dict[str, Any]  # what the store keeps about the request (no image bytes)


def _describe(frames: Sequence[Frame], request: Request) -> dict[str, Any]:
    return {
        "frames": [f.describe() for f in frames],
        "prompt": [m.text for m in request.messages],
    }


async def infer(
    task: Task,
    model: Model,
    samples: Sequence[Sample],
    store: Store,
    plan: str,
    run_id: int,
    cache: FrameCache | None,
    concurrency: int = 16,
    show_progress: bool = True,
) -> InferStats:
    if not model.start_when_needed:
        await model.start()  # an unreachable server or a bad key stops here, before any decoding
    start_lock = asyncio.Lock()
    started = not model.start_when_needed
    stats = InferStats(planned=len(samples))
    answered = store.answered_keys(plan)
    workers = max(1, concurrency)
    queue: asyncio.Queue[_Prepared | None] = asyncio.Queue(maxsize=workers * model.batch_size)
    loop = asyncio.get_running_loop()
    decode_slots = asyncio.Semaphore(2 * (os.cpu_count() or 2))

    with (
        ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool,
        progress_bar(disable=not show_progress) as progress,
    ):
        bar = progress.add_task(f"infer {task.name} · {model.spec}", total=len(samples))

        async def prepare(sample: Sample) -> None:
            async with decode_slots:
                try:
                    frames = (
                        await loop.run_in_executor(
                            pool, load_frames, sample.media, task.frame_spec, cache
                        )
                        if model.needs_frames
                        else []
                    )
                except DataError as e:
                    store.put_failure(plan, sample.id, run_id, None, f"{sample.id}: {e}", "media")
                    stats.failed += 1
                    progress.advance(bar)
                    return
            messages = task.build_messages(sample, frames)
            key = request_key(plan, sample.id, messages)
            if key in answered:
                stats.reused += 1
                progress.advance(bar)
                return
            request = Request(key, sample.id, messages, task.generation, task.choices(sample))
            await queue.put(_Prepared(sample, request, _describe(frames, request)))

        async def produce() -> None:
            await asyncio.gather(*(prepare(s) for s in samples))
            for _ in range(workers):
                await queue.put(None)

        def finish(item: _Prepared, response: Response) -> None:
            if response.ok:
                store.put_response(
                    plan,
                    item.sample.id,
                    run_id,
                    prompt_hash(item.request.messages),
                    item.record,
                    response,
                )
                answered.add(response.key)
                stats.answered += 1
                stats.usage += response.usage
            else:
                store.put_failure(
                    plan,
                    item.sample.id,
                    run_id,
                    response.key,
                    f"{item.sample.id}: {response.error or response.status}",
                    response.status,
                )
                stats.failed += 1
            progress.advance(bar)

        async def ensure_started() -> None:
            nonlocal started
            async with start_lock:
                if not started:
                    await model.start()  # a ConfigError here stops the run
                    started = True

        async def work() -> None:
            while (item := await queue.get()) is not None:
                await ensure_started()
                batch = [item]
                while len(batch) < model.batch_size and not queue.empty():
                    nxt = queue.get_nowait()
                    if nxt is None:
                        queue.put_nowait(None)  # leave the stop signal for this worker's next turn
                        break
                    batch.append(nxt)
                try:
                    responses = await model.generate([p.request for p in batch])
                except Exception as e:  # a backend bug must not stop the run: record and go on
                    responses = [Response(p.request.key, None, error=repr(e)) for p in batch]
                for prepared, response in zip(batch, responses, strict=True):
                    finish(prepared, response)

        await asyncio.gather(produce(), *(work() for _ in range(workers)))
    return stats
