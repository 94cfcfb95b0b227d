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
from itertools import islice

from vidbench.core.errors import DataError
from vidbench.core.records import Sample
from vidbench.core.requests import Response
from vidbench.media.cache import FrameCache
from vidbench.models.base import Model
from vidbench.progress import progress_bar
from vidbench.runner.prepare import Prepared, answered_by_labels, request_unless_answered
from vidbench.runner.recorder import Answer, InferStats, Recorder
from vidbench.runner.store import Store
from vidbench.tasks.base import Task

# Samples a preparer checks at once for answers already stored (by their frames' labels, no
# image read): one trip to the thread pool for them all, not one a sample.
CHECK_CHUNK = 16


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
    workers = max(1, concurrency)
    queue: asyncio.Queue[Prepared | None] = asyncio.Queue(maxsize=workers * model.batch_size)
    loop = asyncio.get_running_loop()
    # samples prepared at once: each preparer takes the next sample when it has handed on its
    # last, so the stage holds the samples in flight, not a coroutine per sample
    preparers = 2 * (os.cpu_count() or 2)

    with (
        ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool,
        progress_bar(disable=not show_progress) as progress,
    ):
        bar = progress.add_task(f"infer {task.name} · {model.spec}", total=len(samples))

        recorder = Recorder(store, plan, run_id, len(samples), lambda: progress.advance(bar))

        def answered_among(chunk: list[Sample]) -> list[bool | DataError]:
            """Which samples of a chunk are answered already, by their frames' labels (or the
            error of their unusable media): one trip to the thread pool a chunk."""
            found: list[bool | DataError] = []
            for sample in chunk:
                try:
                    found.append(
                        answered_by_labels(
                            task, sample, cache, model.needs_frames, plan, recorder.answered
                        )
                    )
                except DataError as e:
                    found.append(e)
            return found

        async def prepare(sample: Sample) -> None:
            try:
                prepared = await loop.run_in_executor(
                    pool,
                    request_unless_answered,
                    task,
                    sample,
                    cache,
                    model.needs_frames,
                    plan,
                    recorder.answered,
                )
            except DataError as e:
                recorder.failure(sample.id, None, f"{sample.id}: {e}", "media")
                return
            if prepared is None:
                recorder.reused()
                return
            await queue.put(prepared)

        remaining = iter(samples)  # shared by the preparers: each `islice` is one step

        async def preparer() -> None:
            while chunk := list(islice(remaining, CHECK_CHUNK)):
                found = await loop.run_in_executor(pool, answered_among, chunk)
                for sample, answered in zip(chunk, found, strict=True):
                    if isinstance(answered, DataError):
                        recorder.failure(sample.id, None, f"{sample.id}: {answered}", "media")
                    elif answered:
                        recorder.reused()
                    else:
                        await prepare(sample)

        async def produce() -> None:
            await asyncio.gather(*(preparer() for _ in range(preparers)))
            for _ in range(workers):
                await queue.put(None)

        def finish(item: Prepared, response: Response) -> None:
            recorder.answer(Answer(item.sample_id, item.prompt_hash, item.record, response))

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

        tasks = [
            asyncio.create_task(produce()),
            *(asyncio.create_task(work()) for _ in range(workers)),
        ]
        try:
            await asyncio.gather(*tasks)
        finally:
            # One task's error (a full disk, a ConfigError from start) ends the stage: the others
            # stop here and their own errors are collected, so none is left for asyncio.run's
            # shutdown to report as a traceback.
            for running in tasks:
                running.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
    return recorder.stats
