"""A run holds a batch of samples, not all: they are read from the task's loader once (a record
at a time where it streams), kept in a spool file, and read back a batch at a time by each
stage (runner/samples.py)."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest

from vidbench.core.records import MediaRef, Sample
from vidbench.registry import get_task
from vidbench.runner.samples import BATCH, RunSamples
from vidbench.tasks.base import Task
from vidbench.tasks.problems import Problem

N = 2 * BATCH + 7  # two whole batches and a part


def alive_samples() -> int:
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is Sample)


@pytest.fixture
def streaming_task(monkeypatch: pytest.MonkeyPatch) -> tuple[Task, list[int]]:
    """4dbench-qa whose loader streams N made-up samples with a problem among them; the list
    counts how many times the loader was read."""
    task = get_task("4dbench-qa")
    reads: list[int] = []

    def iter_load(self: Task, data: Path) -> Iterator[Sample | Problem]:
        reads.append(1)
        media = MediaRef.single(data / "clip.mp4")
        for n in range(N):
            if n == 5:
                yield Problem("bad-5", data / "qa.json", "record is not a JSON object")
            yield Sample(f"q{n}", "4dbench", "mcq", media, "?", ("a", "b"), "A")

    monkeypatch.setattr(type(task), "iter_load", iter_load)
    return task, reads


def test_samples_come_back_in_order_a_batch_at_a_time_from_one_read(
    streaming_task: tuple[Task, list[int]], tmp_path: Path
) -> None:
    task, reads = streaming_task
    said: list[Problem] = []
    samples = RunSamples(task, tmp_path, on_problem=said.append)
    assert len(samples) == N and reads == [1]
    assert [p.record for p in samples.problems] == ["bad-5"] and said == samples.problems
    sizes = [len(batch) for batch in samples.batches()]
    assert sizes == [BATCH, BATCH, 7]
    ids = [s.id for s in samples]
    assert ids == [f"q{n}" for n in range(N)]
    # two passes at once (a stage that reads while another goes on) each see every sample
    first, second = samples.batches(), samples.batches()
    pairs = list(zip(first, second, strict=True))
    assert all([s.id for s in a] == [s.id for s in b] for a, b in pairs)
    assert reads == [1]  # the loader was read once, whatever the passes
    samples.close()


def test_a_pass_holds_a_batch_not_every_sample(
    streaming_task: tuple[Task, list[int]], tmp_path: Path
) -> None:
    task, _ = streaming_task
    samples = RunSamples(task, tmp_path)
    before = alive_samples()
    assert len(samples) == N
    assert alive_samples() - before == 0  # loaded into the spool, none held
    looked_at = {1, BATCH - 1, BATCH + 1, 2 * BATCH + 3}  # each batch (a scan of every object
    most = 0  # in the process costs a second in a full test run: a few, not every 100th)
    for n, _sample in enumerate(samples):
        if n in looked_at:
            most = max(most, alive_samples() - before)
    assert 0 < most <= BATCH
    samples.close()


def test_limit_keeps_the_first_samples_and_every_problem(
    streaming_task: tuple[Task, list[int]], tmp_path: Path
) -> None:
    task, _ = streaming_task
    samples = RunSamples(task, tmp_path, limit=3)
    assert [s.id for s in samples] == ["q0", "q1", "q2"]
    assert [p.record for p in samples.problems] == ["bad-5"]  # found after the limit: still said
    samples.close()
