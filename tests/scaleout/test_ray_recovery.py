"""`vidbench run --ray` after worker deaths: no hang, every sample answered once, suspects sent
again in small groups, a worker that dies at the end costs only its timing (docs/scale-out.md,
"Worker deaths")."""

from __future__ import annotations

import json
import random
import sqlite3
import threading
import time
from collections import deque
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from ray_support import (
    MARKS_ENV,
    WORKER_ENV,
    DiesAtTiming,
    SlowStart,
    config,
    kill,
    run,
    scripted_reply,
    spec_of,
    worker_pids,
)

from conftest import make_qa_dataset
from vidbench.core.records import MediaRef, Sample
from vidbench.runner.ray.driver import SUSPECT_GROUP, RaySettings, _Driver, _InFlight, _Slot
from vidbench.testing import ChatServer

ray = pytest.importorskip("ray")
pytestmark = pytest.mark.slow  # a Ray cluster per module, workers killed and restarted


@pytest.fixture(scope="module")
def marks(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("marks")


@pytest.fixture(scope="module")
def cluster(marks: Path) -> Iterator[None]:
    ray.init(
        num_cpus=4,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {**WORKER_ENV, MARKS_ENV: str(marks)}},
    )
    yield
    ray.shutdown()


@pytest.fixture(scope="module")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_qa_dataset(tmp_path_factory.mktemp("ray_release"), n_objects=8)  # 40 questions


def _no_workers_left() -> None:
    deadline = time.monotonic() + 10
    while worker_pids() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert worker_pids() == []


# ------------------------------------------------------------------------------ the limiter
def test_a_dead_workers_waiting_calls_never_get_a_slot(cluster: None) -> None:
    """`forget` frees the slots a dead worker held; its calls still waiting for one, and any
    arriving later, are refused, so the live workers get every slot."""
    from vidbench.runner.ray.limiter import LimiterActor

    limiter = LimiterActor.remote(2)
    ray.get([limiter.acquire.remote("dead"), limiter.acquire.remote("live")])
    waiting = [limiter.acquire.remote("dead") for _ in range(2)]  # queued when it died
    assert ray.wait(waiting, timeout=0.3)[0] == []
    assert ray.get(limiter.forget.remote("dead")) == 1
    ray.get(limiter.release.remote("live"))
    for ref in waiting:
        with pytest.raises(ray.exceptions.RayTaskError, match="declared dead"):
            ray.get(ref, timeout=5)
    with pytest.raises(ray.exceptions.RayTaskError, match="declared dead"):
        ray.get(limiter.acquire.remote("dead"), timeout=5)  # a late call from it
    live = [limiter.acquire.remote("live") for _ in range(2)]
    ray.get(live, timeout=5)  # both slots are the live worker's
    assert ray.get(limiter.stats.remote()) == {
        "granted": 4, "refused": 3, "in_flight": 2, "limit": 2.0
    }  # fmt: skip
    ray.kill(limiter)


# ------------------------------------------------------------------------------ random kills
QUESTIONS = 8  # per run
LATENCY_S = 0.5  # per call: longer than the driver takes to see a death and forget the worker


def _run_with_a_kill(cfg: Any, server: ChatServer, after: int, rng: random.Random) -> str:
    """Run `cfg`, killing one of its workers at a random moment after `after` answers were
    served; "" when it ended with every sample answered once, else what went wrong."""
    killed: list[int] = []

    def killer() -> None:
        deadline = time.monotonic() + 60
        while (server.stats().served < after or not worker_pids()) and time.monotonic() < deadline:
            time.sleep(0.005)
        time.sleep(rng.uniform(0, LATENCY_S))  # at any point of the calls in flight
        killed.append(rng.choice(worker_pids()))
        kill(killed[-1])

    results: dict[str, Any] = {}
    driver = threading.Thread(target=lambda: results.update(run(cfg)), daemon=True)
    threading.Thread(target=killer, daemon=True).start()
    driver.start()
    driver.join(timeout=60)
    if driver.is_alive():
        return "hung"
    with sqlite3.connect(Path(cfg.out) / "store.sqlite") as db:
        rows = db.execute("SELECT COUNT(*), COUNT(DISTINCT sample_id) FROM responses").fetchone()
        failures = db.execute("SELECT COUNT(*) FROM failures").fetchone()[0]
    n, errors = results.get("n"), results.get("errors")
    if not killed or n != QUESTIONS or errors or rows != (QUESTIONS, QUESTIONS) or failures:
        return f"killed {killed}; n={n}, errors={errors}, stored {rows}, {failures} failures"
    return ""


@pytest.mark.slow
def test_a_worker_killed_at_random_points_never_hangs_the_run(
    cluster: None, release: Path, tmp_path: Path
) -> None:
    """4 runs of 2 workers sharing the API limiter, each with one worker killed after a random
    number of answers: every run ends, each sample answered exactly once. With --concurrency 1
    the dead worker's one waiting call, granted after it was forgotten, held the only slot for
    ever; --concurrency 4 is the issue's setting."""
    rng = random.Random(28)
    with ChatServer() as server:
        for attempt in range(4):
            server.reset(latency=LATENCY_S, reply=scripted_reply)
            concurrency = 4 if attempt % 3 == 2 else 1
            spec = spec_of(server)
            cfg = config(
                release, tmp_path / f"run{attempt}", tmp_path / "cache", spec,
                concurrency=concurrency, ray="auto", limit=QUESTIONS,
            )  # fmt: skip
            after = rng.randint(0, QUESTIONS // 2)  # 0: maybe while the workers start
            wrong = _run_with_a_kill(cfg, server, after, rng)
            assert wrong == "", f"run {attempt}: a worker killed after {after} answers: {wrong}"
            _no_workers_left()


def test_a_worker_killed_while_it_starts_is_replaced(
    cluster: None, release: Path, tmp_path: Path
) -> None:
    """Killed in its constructor, the run's first worker is not a model that cannot be built:
    another one takes its place and the run goes on."""
    killed: list[int] = []

    def killer() -> None:
        deadline = time.monotonic() + 60
        while not worker_pids() and time.monotonic() < deadline:
            time.sleep(0.01)
        killed.append(worker_pids()[0])
        kill(killed[-1])

    threading.Thread(target=killer, daemon=True).start()
    out = tmp_path / "out"
    results = run(
        config(release, out, tmp_path / "cache", SlowStart.spec, ray="auto", ray_workers=1)
    )
    assert killed and results["n"] == 40 and results["errors"] == 0
    _no_workers_left()


# ------------------------------------------------------------------------------ timing
def test_a_worker_that_dies_at_the_end_costs_only_its_timing(
    cluster: None, release: Path, marks: Path, tmp_path: Path
) -> None:
    (marks / "died-at-timing").unlink(missing_ok=True)
    out = tmp_path / "out"
    cfg = config(release, out, tmp_path / "cache", DiesAtTiming.spec, concurrency=2, ray="auto")
    results = run(cfg)  # 2 s of calls per worker: both workers take part
    assert (marks / "died-at-timing").exists()  # one worker died when asked for its timing
    assert results["n"] == 40 and results["errors"] == 0
    assert len((out / "samples.jsonl").read_text().splitlines()) == 40
    timing = json.loads((out / "timing.json").read_text())
    assert timing["devices"] == 1 and timing["workers_lost"] == 1  # missing, and said so
    assert 0 < timing["batches"] < 40
    _no_workers_left()


# ------------------------------------------------------------------------------ suspects
class _Handle:
    """A stand-in worker handle: records what the driver sends (`handle.answer.remote`)."""

    def __init__(self) -> None:
        self.answer = self
        self.sent: list[list[str]] = []

    def remote(self, samples: list[Sample], answered: set[str]) -> object:
        self.sent.append([s.id for s in samples])
        return object()


class _Recorder:
    def __init__(self) -> None:
        self.failed: dict[str, str] = {}

    def failure(self, sample_id: str, key: str | None, message: str, status: str) -> None:
        self.failed[sample_id] = message

    def answered_keys_of(self, sample_ids: list[str]) -> set[str]:
        return set()  # none answered yet


def _sample(n: int) -> Sample:
    return Sample(f"s{n}", "test", "mcq", MediaRef({}))


def test_suspects_go_out_in_parallel_groups_and_only_a_second_death_isolates() -> None:
    recorder = _Recorder()
    slots = [_Slot(i, _Handle(), ready=True) for i in range(3)]
    slots[2].inflight = 1  # busy with other work
    pending = deque([[_sample(n)] for n in range(100, 104)])
    settings = RaySettings(inflight=2)
    driver = _Driver(settings, {}, None, None, recorder, pending)  # type: ignore[arg-type]
    driver.slots = slots
    dead = _Slot(9, _Handle())
    driver._requeue(_InFlight(dead, 0, [_sample(n) for n in range(8)], exclusive=False))
    assert recorder.failed == {}  # one death proves nothing
    driver._dispatch(slots)
    groups = [slot.handle.sent for slot in slots]
    assert SUSPECT_GROUP == 4
    assert groups == [
        [["s0", "s1", "s2", "s3"]],  # the idle workers take a group each, at once
        [["s4", "s5", "s6", "s7"]],
        [["s100"]],  # the busy one goes on with the rest
    ]
    # the worker running s4..s7 dies too: those four are isolated, each sent alone
    [second] = [f for f in driver.flights.values() if f.slot is slots[1]]
    driver._requeue(second)
    slots[1].exclusive, slots[1].inflight = False, 0  # its replacement is ready
    assert recorder.failed == {}
    driver._dispatch(slots)
    assert slots[1].handle.sent[-1] == ["s4"] and list(driver.isolated) == [
        _sample(n) for n in (5, 6, 7)
    ]
    # s4 kills the worker it was alone in: it fails; the others go on alone
    [alone] = [f for f in driver.flights.values() if f.samples == [_sample(4)]]
    driver._requeue(alone)
    assert list(recorder.failed) == ["s4"]
    assert "in flight when 3 Ray workers died, the last time alone" in recorder.failed["s4"]
