"""`vidbench run --ray`: the infer stage sharded over Ray worker actors (docs/scale-out.md).

The driver loads the samples, starts N `InferWorker` actors (worker.py; one model replica
each: a local model gets one GPU per worker through Ray's resources, API models share one
`LimiterActor` bounding calls in flight across all workers), sends them samples in small chunks,
at most `inflight` chunks per worker, and records every outcome as it arrives (`ray.wait`)
through the same Recorder as the local infer stage: the driver is the only writer of the store,
so resume, reuse and results are those of a local run.

Faults: when a worker dies, the samples it had in flight go back in line and a new worker takes
its place. Those samples are suspects: they are sent again in small groups (SUSPECT_GROUP), each
group to an idle worker that then gets nothing else (the replacement, or any worker whose work
ran out), while busy workers go on with the rest. A sample whose group kills another worker is
isolated: sent alone to an idle worker; a sample that kills a worker while alone, after an
earlier death, is recorded as failed and the run goes on. Answers already recorded
are never asked again: a killed driver (kill -9) resumes from the store like a local run, and
the answers its workers got but it never stored are in their spool files (runner/spool.py),
which the next run stores first; a local cluster's processes end with the driver
(cluster.py, watchdog.py).
"""

from __future__ import annotations

from collections import Counter, deque
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from vidbench.core.errors import ConfigError, VidbenchError
from vidbench.core.files import Json
from vidbench.core.records import Sample, batched
from vidbench.progress import progress_bar
from vidbench.runner.ray.cluster import ray_cluster
from vidbench.runner.ray.worker import InferWorker, RequestOutcome, WorkerSetup
from vidbench.runner.recorder import InferStats, Recorder
from vidbench.runner.samples import SampleSet
from vidbench.runner.spool import take_spooled
from vidbench.runner.store import Store
from vidbench.tasks.base import Task

if TYPE_CHECKING:  # Ray is read untyped (pyproject: [tool.mypy]): these name its types
    from ray import ObjectRef
    from ray.actor import ActorHandle
    from ray.exceptions import RayActorError

SUSPECT_GROUP = 4  # samples of a dead worker sent again together, to one idle worker
START_DEATHS = 3  # a slot whose workers die this many times while starting stays empty


@dataclass(frozen=True)
class RaySettings:
    address: str | None = None  # None or "local": a cluster on this machine; "auto"; an address
    workers: int = 2
    inflight: int = 16  # chunks in flight per worker
    chunk: int = 1  # samples per chunk (a local model's batch size)
    cpus_per_worker: float = 1.0
    gpus_per_worker: float = 0.0
    concurrency: int | None = None  # API models: calls in flight over all workers
    requests_per_s: float | None = None  # API models: calls started per second over all workers


@dataclass
class _Slot:
    """A place for one worker; `generation` counts the workers it has had."""

    index: int
    handle: ActorHandle | None = None
    generation: int = 0
    inflight: int = 0
    exclusive: bool = False  # running suspects (a group, or one sample alone), nothing else
    ready: bool = False  # started: chunks go only to started workers
    start_deaths: int = 0  # workers of this slot that died while starting (killed, not failed)

    @property
    def worker(self) -> ActorHandle:
        """The slot's worker (every slot gets one before it is asked anything)."""
        assert self.handle is not None, f"slot {self.index} has no worker yet"
        return self.handle


class _Chunks:
    """The samples not sent yet, cut into chunks as they are sent: read from the run's samples
    as they go out, so the driver holds only the chunks in flight."""

    def __init__(self, samples: Iterable[Sample], size: int) -> None:
        self.ahead = batched(samples, max(1, size))
        self.next: list[Sample] = next(self.ahead, [])

    def __bool__(self) -> bool:
        return bool(self.next)

    def popleft(self) -> list[Sample]:
        chunk, self.next = self.next, next(self.ahead, [])
        return chunk


@dataclass(frozen=True)
class _InFlight:
    slot: _Slot
    generation: int
    samples: list[Sample]
    exclusive: bool


@dataclass
class _Driver:
    """The scheduling loop: chunks out, outcomes in, dead workers replaced."""

    settings: RaySettings
    identity: Mapping[str, Json]  # the model's identity in the driver: the plan's key
    make_worker: Callable[[str], ActorHandle]  # (name) -> a new worker
    limiter: ActorHandle | None  # the LimiterActor of an API model
    recorder: Recorder
    pending: _Chunks
    suspects: deque[Sample] = field(default_factory=deque)  # in flight at one death: in groups
    isolated: deque[Sample] = field(default_factory=deque)  # in flight at two: alone
    deaths: Counter[str] = field(default_factory=Counter)
    flights: dict[ObjectRef, _InFlight] = field(default_factory=dict)
    starting: dict[ObjectRef, tuple[_Slot, int]] = field(default_factory=dict)  # readiness refs
    slots: list[_Slot] = field(default_factory=list)
    replaced: int = 0

    def run(self) -> None:
        import ray

        self.slots = slots = [_Slot(i) for i in range(self.settings.workers)]
        for slot in slots:
            self._start(slot)
        self._check_identity(slots[0])
        while True:
            self._dispatch(slots)
            if not self.flights and not self.pending and not self.suspects and not self.isolated:
                return
            refs = [*self.flights, *self.starting]
            if not refs:
                raise VidbenchError(
                    "every Ray worker died or could not start; the answers so far are stored: "
                    "run the same command again to continue"
                )
            ready, _ = ray.wait(refs, num_returns=1)
            if len(refs) > 1:  # and whatever else is ready now: one pass per wake-up
                ready, _ = ray.wait(refs, num_returns=len(refs), timeout=0)
            for ref in ready:
                if ref in self.starting:
                    self._started(ref, *self.starting.pop(ref))
                else:
                    self._receive(ref, self.flights.pop(ref))

    def timing(self) -> dict[str, float | int] | None:
        """The device and preparing seconds of the workers alive at the end, summed. A replaced
        worker's are lost with it, and so are those of a worker that died after its last
        answer: `workers_lost` counts both (the run's answers are all recorded already)."""
        import ray
        from ray.exceptions import RayActorError

        timings = []
        lost = self.replaced
        for ref in [slot.worker.timing.remote() for slot in self.slots if slot.ready]:
            try:
                timing = ray.get(ref)
            except RayActorError:  # died idle at the end: its seconds are missing, not the run
                lost += 1
                continue
            if timing:
                timings.append(timing)
        if not timings:
            return None
        summed = {k: round(sum(t[k] for t in timings), 3) for k in timings[0]}
        return {**summed, "devices": len(timings), "workers_lost": lost}

    def _start(self, slot: _Slot) -> None:
        """A new worker in `slot`; it gets chunks once it answers (a replacement that waits
        for resources, e.g. a GPU of a lost node, gets none meanwhile)."""
        slot.handle = self.make_worker(f"{slot.index}.{slot.generation}")
        slot.ready = False
        self.starting[slot.worker.pid.remote()] = (slot, slot.generation)

    def _started(self, ref: ObjectRef, slot: _Slot, generation: int) -> None:
        import ray
        from ray.exceptions import RayActorError

        try:
            ray.get(ref)
        except RayActorError as e:  # killed while starting: another one; failed: left empty
            if slot.generation == generation and self._restartable(slot, e):
                self._replace(slot)
            return
        slot.ready = slot.generation == generation

    def _restartable(self, slot: _Slot, error: RayActorError) -> bool:
        """Whether a worker that died before it started gets a successor: yes when its process
        died (killed, a lost node), a few times; no when its constructor failed."""
        if error.actor_init_failed or slot.start_deaths >= START_DEATHS:
            return False
        slot.start_deaths += 1
        return True

    def _check_identity(self, slot: _Slot) -> None:
        """Answers are stored under the driver's identity of the model: a worker's must match
        (an `hf:` model with device=auto is a GPU model in a worker, a CPU one on a head node)."""
        import ray
        from ray.exceptions import RayActorError

        here = self.identity
        while True:
            try:
                there = ray.get(slot.worker.identity.remote())
                break
            except RayActorError as e:  # its constructor failed: every worker's would
                if self._restartable(slot, e):  # it was killed while starting
                    self._replace(slot)
                    continue
                raise ConfigError(
                    f"the Ray workers cannot build model {here.get('spec')!r}: "
                    + str(e).strip().splitlines()[-1]  # the error, without Ray's traceback
                ) from None
        if there != here:
            keys = [k for k in sorted({*there, *here}) if there.get(k) != here.get(k)]
            differ = [f"{k}: {there.get(k)!r} there, {here.get(k)!r} here" for k in keys]
            advice = (
                "give every node the same checkpoint files (a copy keeps their names, sizes and "
                "modification times with `rsync -t` or `cp -p`)"
                if keys == ["weights"]  # the folder's files key the answers (hf_checkpoint)
                else "set it explicitly (e.g. --model-opt device=cuda)"
            )
            raise ConfigError(
                f"model {here.get('spec')!r} is not the same in the Ray workers as here "
                f"({'; '.join(differ)}); {advice}"
            )

    def _send(self, slot: _Slot, samples: list[Sample], exclusive: bool = False) -> None:
        # the keys of these samples answered already go with them: workers skip those
        answered = self.recorder.answered_keys_of([sample.id for sample in samples])
        ref = slot.worker.answer.remote(samples, answered)
        self.flights[ref] = _InFlight(slot, slot.generation, samples, exclusive)
        slot.inflight += 1
        slot.exclusive = exclusive

    def _dispatch(self, slots: list[_Slot]) -> None:
        for slot in slots:
            if slot.exclusive or not slot.ready:
                continue
            if slot.inflight == 0 and (self.isolated or self.suspects):  # an idle worker (a
                # replacement, or one whose work ran out) takes an isolated sample alone or a
                # group of suspects, and nothing else; busy workers go on with the rest
                queue = self.isolated or self.suspects
                size = 1 if queue is self.isolated else SUSPECT_GROUP
                self._send(slot, [queue.popleft() for _ in range(min(size, len(queue)))], True)
                continue
            while slot.inflight < self.settings.inflight and self.pending:
                self._send(slot, self.pending.popleft())

    def _receive(self, ref: ObjectRef, flight: _InFlight) -> None:
        import ray
        from ray.exceptions import RayActorError, RayTaskError

        slot = flight.slot
        try:
            outcomes: list[RequestOutcome] = ray.get(ref)
        except RayActorError:
            if slot.generation == flight.generation:
                self._replace(slot)
            self._requeue(flight)
            return
        except RayTaskError as e:  # e.g. the model's start failed: a ConfigError stops the run
            raise e.as_instanceof_cause() from None
        if slot.generation == flight.generation:
            slot.inflight -= 1
            slot.exclusive = False
        for outcome in outcomes:
            self._record(outcome)

    def _replace(self, slot: _Slot) -> None:
        import ray

        ray.kill(slot.handle, no_restart=True)  # a worker that hangs rather than died
        if self.limiter is not None:  # the calls it had open will never end
            self.limiter.forget.remote(f"{slot.index}.{slot.generation}")
        slot.generation += 1
        slot.inflight = 0
        slot.exclusive = False
        self.replaced += 1
        self._start(slot)

    def _requeue(self, flight: _InFlight) -> None:
        """A dead worker's samples: suspects after one death, isolated after a second, failed
        when their worker died while they were alone in it (and not for the first time)."""
        alone = flight.exclusive and len(flight.samples) == 1
        for sample in flight.samples:
            self.deaths[sample.id] += 1
            deaths = self.deaths[sample.id]
            if deaths >= 2 and alone:
                message = (
                    f"{sample.id}: its request was in flight when {deaths} Ray workers died, the "
                    "last time alone (it may crash the model); not asked again in this run"
                )
                self.recorder.failure(sample.id, None, message, "error")
            elif deaths >= 2:
                self.isolated.append(sample)
            else:
                self.suspects.append(sample)

    def _record(self, outcome: RequestOutcome) -> None:
        if outcome.kind == "reused":
            if outcome.key is not None:  # its answer becomes the sample's latest
                self.recorder.answered_among([outcome.key])
            self.recorder.reused()
        elif outcome.kind in ("media", "prompt"):
            self.recorder.failure(outcome.sample_id, None, str(outcome.error), outcome.kind)
        else:
            assert outcome.answer is not None
            self.recorder.answer(outcome.answer)


def _check_gpus(settings: RaySettings, cluster_gpus: float) -> None:
    """A GPU worker on a cluster without a free GPU would wait for one for ever."""
    if settings.gpus_per_worker > cluster_gpus:
        raise ConfigError(
            f"each Ray worker of this model asks for {settings.gpus_per_worker:g} GPU and the "
            f"cluster has {cluster_gpus:g} (`ray status` lists them); start the workers on GPU "
            "nodes, or run the model on CPUs with --model-opt device=cpu"
        )


def ray_infer(
    task: Task,
    setup: WorkerSetup,
    samples: SampleSet,
    store: Store,
    run_id: int,
    settings: RaySettings,
    identity: Mapping[str, Json],
    show_progress: bool = True,
) -> InferStats:
    """The infer stage of one run on a Ray cluster; the store is written here only."""
    with ray_cluster(settings.address, settings.workers):
        import ray

        from vidbench.runner.ray.limiter import LimiterActor

        with progress_bar(disable=not show_progress) as progress:
            bar = progress.add_task(
                f"infer {task.name} · {setup.model_spec} · ray x{settings.workers}",
                total=len(samples),
            )
            recorder = Recorder(
                store, setup.plan, run_id, len(samples), lambda: progress.advance(bar)
            )
            _check_gpus(settings, ray.cluster_resources().get("GPU", 0.0))
            limiter = None
            if settings.concurrency is not None:
                limiter = LimiterActor.remote(  # type: ignore[attr-defined]  # ray.remote adds it
                    settings.concurrency, settings.requests_per_s
                )
            actor = ray.remote(
                num_cpus=settings.cpus_per_worker, num_gpus=settings.gpus_per_worker
            )(InferWorker)

            def make_worker(name: str) -> ActorHandle:
                return actor.remote(setup, limiter, name)

            pending = _Chunks(samples, settings.chunk)
            driver = _Driver(settings, identity, make_worker, limiter, recorder, pending)
            try:
                driver.run()
                recorder.stats.timing = driver.timing()
            finally:  # free their CPUs and GPUs now, also when an error (and its traceback,
                # which holds the handles) leaves here
                for slot in driver.slots:
                    ray.kill(slot.handle, no_restart=True)
                if limiter is not None:
                    ray.kill(limiter, no_restart=True)
                take_spooled(store)  # answers the workers got that never reached this loop
        return recorder.stats
