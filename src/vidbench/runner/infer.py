"""The `infer` stage: prepare frames, build requests, call the model, store every answer.

Frames are prepared in a thread pool (PyAV decodes outside the GIL) while up to `concurrency`
model calls are in flight. Samples that show the same frames (the questions of one clip) are
prepared together: their frames are loaded once, then each sample's request is queued, so a
clip's requests go out as soon as it is ready. The pool takes one clip per core in the samples'
order, so the cores decode different clips instead of questions of one clip waiting for each
other. Requests already answered in the store are skipped, known by their frames' labels before
any image is read, so a rerun makes no model call and reads no frame, and a killed run
continues where it stopped.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Hashable, Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor

from vidbench.core.errors import DataError
from vidbench.core.records import Sample, batched
from vidbench.core.requests import Response
from vidbench.media.cache import FrameCache
from vidbench.models.base import Model, answers_of, start_checked
from vidbench.progress import progress_bar
from vidbench.runner.prepare import (
    PROMPT,
    Preparation,
    Prepared,
    PromptError,
    build_request,
    sample_frames,
)
from vidbench.runner.recorder import Answer, InferStats, Recorder
from vidbench.runner.samples import SampleSet
from vidbench.runner.store import Store
from vidbench.tasks.base import Task

# Samples a preparer checks at once for answers already stored (by their frames' labels, no
# image read): one trip to the thread pool for them all, not one a sample.
CHECK_CHUNK = 16


async def infer(
    task: Task,
    model: Model,
    samples: SampleSet,
    store: Store,
    plan: str,
    run_id: int,
    cache: FrameCache | None,
    concurrency: int = 16,
    show_progress: bool = True,
) -> InferStats:
    if not model.start_when_needed:
        await start_checked(
            model
        )  # an unreachable server or a bad key stops here, before any decoding
    start_lock = asyncio.Lock()
    started = not model.start_when_needed
    workers = max(1, concurrency)
    queue: asyncio.Queue[Prepared | None] = asyncio.Queue(maxsize=workers * model.batch_size)
    loop = asyncio.get_running_loop()
    cores = preparing_threads()
    # Groups whose frames are to be loaded, waiting for a decoder: bounded, so the frames held in
    # memory stay bounded and the stage holds no coroutine per sample.
    to_decode: asyncio.Queue[list[Sample] | None] = asyncio.Queue(maxsize=2 * cores)

    with (
        ThreadPoolExecutor(max_workers=cores) as pool,
        progress_bar(disable=not show_progress) as progress,
    ):
        bar = progress.add_task(f"infer {task.name} · {model.spec}", total=len(samples))

        recorder = Recorder(store, plan, run_id, len(samples), lambda: progress.advance(bar))
        preparation = Preparation(task, cache, model.needs_frames, plan)

        def label_keys(chunk: list[list[Sample]]) -> list[list[str | None] | DataError]:
            """The request keys of each group of a chunk by their frames' labels (found once a
            group; None where they cannot tell), or the error of the group's unusable media:
            one trip to the thread pool a chunk."""
            found: list[list[str | None] | DataError] = []
            for group in chunk:
                try:
                    found.append(preparation.label_keys_of(group))
                except DataError as e:
                    found.append(e)
            return found

        chunks = chunks_of(same_frames(samples, model.needs_frames, GROUP_WINDOW), CHECK_CHUNK)

        async def check() -> None:
            """Answered samples counted, unusable media recorded, the rest of each group sent
            on to the decoders, a chunk at a time in the samples' order."""
            for chunk in chunks:  # shared by the checkers: each step takes the next chunk
                found = await loop.run_in_executor(pool, label_keys, chunk)
                answered = recorder.answered_among(
                    key for keys in found if not isinstance(keys, DataError) for key in keys if key
                )
                for group, keys in zip(chunk, found, strict=True):
                    if isinstance(keys, DataError):
                        for sample in group:
                            recorder.failure(sample.id, None, f"{sample.id}: {keys}", "media")
                        continue
                    unanswered = [
                        s for s, key in zip(group, keys, strict=True) if key not in answered
                    ]
                    for _ in range(len(group) - len(unanswered)):
                        recorder.reused()
                    if unanswered:
                        await to_decode.put(unanswered)

        async def decode() -> None:
            """A group's frames, loaded once (one clip per core), then a request for each of its
            samples."""
            while (group := await to_decode.get()) is not None:
                try:
                    frames = await loop.run_in_executor(
                        pool, sample_frames, task, group[0], cache, model.needs_frames
                    )
                except DataError as e:
                    for sample in group:
                        recorder.failure(sample.id, None, f"{sample.id}: {e}", "media")
                    continue
                for sample in group:
                    try:
                        prepared = build_request(task, sample, frames, plan)
                    except PromptError as e:  # the task's code failed on this sample alone
                        recorder.failure(sample.id, None, f"{sample.id}: {e}", PROMPT)
                        continue
                    # a grid image's key is known only now that it is made: checked here
                    key = prepared.request.key
                    if not preparation.keys_from_labels and recorder.answered_among([key]):
                        recorder.reused()
                        continue
                    await queue.put(prepared)

        async def produce() -> None:
            decoders = [asyncio.create_task(decode()) for _ in range(2 * cores)]
            try:
                await asyncio.gather(*(check() for _ in range(cores)))
                for _ in decoders:
                    await to_decode.put(None)
                await asyncio.gather(*decoders)
            finally:
                for decoder in decoders:
                    decoder.cancel()
            for _ in range(workers):
                await queue.put(None)

        def finish(item: Prepared, response: Response) -> None:
            recorder.answer(Answer(item.sample_id, item.prompt_hash, item.record, response))

        async def ensure_started() -> None:
            nonlocal started
            async with start_lock:
                if not started:
                    await start_checked(model)  # a ConfigError here stops the run
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
                # one Response per request, whatever the backend did (a bug: that request fails)
                responses = await answers_of(model, [p.request for p in batch])
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


def preparing_threads() -> int:
    """Threads that prepare frames: one per core (each decodes one clip at a time)."""
    return os.cpu_count() or 2


# Consecutive samples grouped by their frames at a time: a clip's questions stand together in
# every benchmark's files, so a window this size finds them while holding few samples. Questions
# of one clip further apart than that make two groups: the second reads the clip's frames from
# the frame cache the first filled, so no clip is decoded twice either way.
GROUP_WINDOW = 4096


def same_frames(
    samples: Iterable[Sample], needs_frames: bool, window: int = GROUP_WINDOW
) -> Iterator[list[Sample]]:
    """The samples in groups that show the same frames, in the order of each group's first
    sample, `window` consecutive samples at a time. A sample's frames depend only on its media
    (video files and time window) and the task's FrameSpec, so samples with equal media are one
    group: the questions of one clip. Without frames, each sample is its own group."""
    if not needs_frames:
        yield from ([sample] for sample in samples)
        return
    for held in batched(samples, window):
        groups: dict[Hashable, list[Sample]] = {}
        # the questions of one object (4D-Bench) share its MediaRef: its key is made once
        keys: dict[int, Hashable] = {}
        for sample in held:
            media = sample.media
            if (key := keys.get(id(media))) is None:
                videos = tuple(sorted((view, str(path)) for view, path in media.videos.items()))
                key = keys[id(media)] = (videos, media.start_s, media.end_s)
            groups.setdefault(key, []).append(sample)
        yield from groups.values()


def chunks_of(groups: Iterable[list[Sample]], size: int) -> Iterator[list[list[Sample]]]:
    """Consecutive groups, as many as hold about `size` samples (at least one group) a chunk."""
    chunk: list[list[Sample]] = []
    held = 0
    for group in groups:
        chunk.append(group)
        held += len(group)
        if held >= size:
            yield chunk
            chunk, held = [], 0
    if chunk:
        yield chunk
