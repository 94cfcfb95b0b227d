"""The Ray worker actor of `vidbench run --ray`: one model replica that answers samples.

A worker builds its model once from the spec (a local model loads its weights on the first
request, on the GPU Ray gave it), decodes its own samples' frames (FrameCache at the configured
path: a shared filesystem or each node's own cache), builds each request exactly as the local
infer stage does (runner/prepare.py), skips requests the store already answered, and returns
plain picklable `RequestOutcome`s. It never writes the store: the driver (runner/ray/driver.py)
does; it writes each answer to its spool file first (runner/spool.py), so an answer on its way to
a driver that is killed is still stored by the next run.
"""

from __future__ import annotations

import asyncio
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from vidbench.core.errors import DataError
from vidbench.core.files import Json
from vidbench.core.records import Sample
from vidbench.core.requests import Response
from vidbench.media.cache import FrameCache
from vidbench.models.api_model import ApiModel
from vidbench.models.base import answers_of, start_checked
from vidbench.models.owned_process import watch_owner
from vidbench.models.registry import ModelOptions, load_model
from vidbench.runner.prepare import Preparation, Prepared, PromptError
from vidbench.runner.recorder import Answer
from vidbench.runner.spool import AnswerSpool
from vidbench.tasks.base import Task

if TYPE_CHECKING:  # Ray is read untyped (pyproject: [tool.mypy]): these name its types
    from ray.actor import ActorHandle


@dataclass(frozen=True)
class WorkerSetup:
    """Everything a worker needs besides the answered keys (picklable; shipped once)."""

    task: Task
    model_spec: str
    model_options: ModelOptions
    plan: str
    cache_dir: str | None  # None: each node's default frame cache
    workdir: str  # the driver's working directory: relative data paths resolve the same
    run_id: int = 0  # the store's run, and where each answer is also written (runner/spool.py;
    spool: str | None = None  # None, or a folder not on this node: nowhere)
    decode_threads: int = 2


@dataclass(frozen=True)
class RequestOutcome:
    """What became of one sample: answered (or failed) by the model, already in the store, or
    its media unusable."""

    sample_id: str
    kind: Literal["answer", "reused", "media", "prompt"]
    answer: Answer | None = None
    error: str | None = None
    key: str | None = None  # `reused`: the request key of the stored answer


class InferWorker:
    """Made a Ray actor by driver.py (`ray.remote(...)(InferWorker)`), so this module
    imports without Ray. Its `answer` is async: Ray runs many calls at once on its loop."""

    def __init__(
        self,
        setup: WorkerSetup,
        limiter: ActorHandle | None = None,
        name: str = "",
    ) -> None:
        # its raylet gone (a local cluster's dies with the driver, however the driver dies):
        # this process ends at once instead of calling the model for nobody
        threading.Thread(target=watch_owner, args=(os.getppid(), 0.05), daemon=True).start()
        if os.path.isdir(setup.workdir):
            os.chdir(setup.workdir)
        self.setup = setup
        self.task = setup.task
        self.model = load_model(setup.model_spec, setup.model_options)
        if limiter is not None and isinstance(self.model, ApiModel):
            from vidbench.runner.ray.limiter import SharedLimiter

            self.model.limiter = SharedLimiter(limiter, name)  # one bound for all workers
        spool_name = name or str(os.getpid())
        self.spool = AnswerSpool.open(setup.spool, spool_name, setup.plan, setup.run_id)
        cache = FrameCache(Path(setup.cache_dir) if setup.cache_dir else None)
        self.preparation = Preparation(self.task, cache, self.model.needs_frames, setup.plan)
        self.pool = ThreadPoolExecutor(max_workers=setup.decode_threads)
        self._started = False
        self._start_lock = asyncio.Lock()

    def pid(self) -> int:
        return os.getpid()

    def timing(self) -> dict[str, float | int] | None:
        return self.model.timing()

    def identity(self) -> dict[str, Json]:
        """The model's identity where it runs (a GPU worker's device type, say)."""
        return self.model.identity()

    async def answer(self, samples: list[Sample], answered: set[str]) -> list[RequestOutcome]:
        """The outcome of each sample: its answer, its unusable media, or `reused` when its
        request key is among `answered` (the keys stored for these samples)."""
        outcomes: list[RequestOutcome] = []
        to_ask: list[Prepared] = []
        prepared_all = await asyncio.gather(*(self._prepare(s, answered) for s in samples))
        for sample, prepared in zip(samples, prepared_all, strict=True):
            if isinstance(prepared, tuple):  # its media unusable, or its prompt
                kind, error = prepared
                outcomes.append(RequestOutcome(sample.id, kind, error=error))
            elif isinstance(prepared, str):
                outcomes.append(RequestOutcome(sample.id, "reused", key=prepared))
            else:
                to_ask.append(prepared)
        if to_ask:
            await self._ensure_started()
            size = max(1, self.model.batch_size)
            batches = [to_ask[i : i + size] for i in range(0, len(to_ask), size)]
            for answers in await asyncio.gather(*(self._ask(b) for b in batches)):
                outcomes += [RequestOutcome(a.sample_id, "answer", a) for a in answers]
        return outcomes

    async def _ask(self, batch: list[Prepared]) -> list[Answer]:
        """The batch's answers, written to the spool as they come (runner/spool.py): one on its
        way to a driver that dies is not lost."""
        responses = await self._generate(batch)
        answers = [
            Answer(p.sample_id, p.prompt_hash, p.record, response)
            for p, response in zip(batch, responses, strict=True)
        ]
        if self.spool is not None:
            self.spool.write(answers)
        return answers

    async def _prepare(
        self, sample: Sample, answered: set[str]
    ) -> Prepared | tuple[Literal["media", "prompt"], str] | str:
        """The sample's request, why it has none (its unusable media, a task that failed on
        its prompt), or the key of its stored answer when it is answered already
        (runner/prepare.Preparation.new_request: then no frame of it is read)."""
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(
                self.pool, self.preparation.new_request, sample, answered
            )
        except PromptError as e:
            return "prompt", f"{sample.id}: {e}"
        except DataError as e:
            return "media", f"{sample.id}: {e}"

    async def _ensure_started(self) -> None:
        async with self._start_lock:
            if not self._started:
                await start_checked(
                    self.model
                )  # a ConfigError here reaches the driver and stops it
                self._started = True

    async def _generate(self, batch: list[Prepared]) -> list[Response]:
        # one Response per request, whatever the backend did (a bug: that request fails)
        return await answers_of(self.model, [p.request for p in batch])
