"""The samples a run reads, a batch at a time.

Each stage of a run (checking the views and the data, infer, judge, score) goes over every
sample. Holding them all would make a run's memory grow with its size (about 2 KB a 4D-Bench
question: 200 MB for 100,000), so they are read from the data once (`Task.iter_load`: a record
at a time where the task's loader can), written to a temporary spool file a batch at a time as
they come, and read back from it a batch at a time by each stage: a run holds a batch of
samples, whatever their number. The spool is the process's own scratch file (deleted when it is
closed, or when the process ends however it ends), never a record of the run: the store and
the results folder are that.
"""

from __future__ import annotations

import pickle
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Protocol

from vidbench.core.records import Sample, batched
from vidbench.runner.store import MAX_IDS
from vidbench.tasks.base import Task
from vidbench.tasks.data import stream_samples
from vidbench.tasks.problems import Problem

# Samples a batch: as many as one store query may name (a batch's answers are read at once).
BATCH = MAX_IDS


class SampleSet(Protocol):
    """Samples a stage goes over once, knowing how many: a RunSamples, or a plain list."""

    def __iter__(self) -> Iterator[Sample]: ...

    def __len__(self) -> int: ...


class RunSamples:
    """The samples of a run's data (the first `limit`, when given) and the problems of the
    records that could not be loaded, read on first use. Iterating gives the samples in the
    data's order; `batches` gives them BATCH at a time; each pass reads the spool anew."""

    def __init__(
        self,
        task: Task,
        data: str | Path,
        limit: int | None = None,
        on_problem: Callable[[Problem], None] = lambda problem: None,
    ) -> None:
        self.task, self.data, self.limit = task, data, limit
        self.on_problem = on_problem
        self._spool: IO[bytes] | None = None
        self._extents: list[tuple[int, int]] = []  # each batch's (offset, length) in the spool
        self._count = 0
        self._problems: list[Problem] = []

    def _loaded(self) -> IO[bytes]:
        if self._spool is not None:
            return self._spool
        spool = tempfile.TemporaryFile(prefix="vidbench-samples-")  # noqa: SIM115 - kept open
        try:
            for batch in batched(self._read(), BATCH):
                self._write(spool, batch)
        except BaseException:
            spool.close()
            self._extents, self._count, self._problems = [], 0, []
            raise
        self._spool = spool
        return spool

    def _read(self) -> Iterator[Sample]:
        """The data's samples (the first `limit`) as the task reads them; its problems kept
        and said as they come, all of them, past the limit too."""
        for item in stream_samples(self.task, self.data):
            if isinstance(item, Problem):
                self._problems.append(item)
                self.on_problem(item)
            elif not self.limit or self._count < self.limit:
                self._count += 1
                yield item

    def _write(self, spool: IO[bytes], batch: list[Sample]) -> None:
        data = pickle.dumps(batch, protocol=pickle.HIGHEST_PROTOCOL)
        self._extents.append((spool.tell(), len(data)))
        spool.write(data)

    def batches(self) -> Iterator[list[Sample]]:
        """The samples, BATCH at a time, in the data's order."""
        spool = self._loaded()
        for offset, length in self._extents:
            spool.seek(offset)  # each pass seeks for itself: two passes may interleave
            yield pickle.loads(spool.read(length))  # this process's own spool: trusted

    def __iter__(self) -> Iterator[Sample]:
        for batch in self.batches():
            yield from batch

    def __len__(self) -> int:
        self._loaded()
        return self._count

    @property
    def problems(self) -> list[Problem]:
        """The records that could not be loaded, each naming its record and file."""
        self._loaded()
        return self._problems

    def close(self) -> None:
        if self._spool is not None:
            self._spool.close()
            self._spool, self._extents, self._count, self._problems = None, [], 0, []
