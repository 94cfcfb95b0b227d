"""Problems found while loading a dataset: each names the record and the file."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Generic, TypeVar

from vidbench.progress import progress_bar

T = TypeVar("T")


@dataclass(frozen=True)
class Problem:
    record: str  # the record id (uid, question key, video id) or "" for a whole-file problem
    path: Path
    message: str
    status: str = "data"  # its status in samples.jsonl and results' errors_by_status

    def __str__(self) -> str:
        where = f"{self.record}: " if self.record else ""
        return f"{where}{self.message} [{self.path}]"


@dataclass
class Loaded(Generic[T]):
    """What a loader read: the good records and every problem with the bad ones."""

    items: list[T]
    problems: list[Problem]

    def stream(self) -> Iterator[T | Problem]:
        """The items, then the problems: what a loader that streams (Task.iter_load) gives."""
        yield from self.items
        yield from self.problems

    @classmethod
    def gathered(cls, stream: Iterable[T | Problem]) -> Loaded[T]:
        """What a streaming loader gave, its items and problems each in their order."""
        loaded: Loaded[T] = cls([], [])
        for item in stream:
            if isinstance(item, Problem):
                loaded.problems.append(item)
            else:
                loaded.items.append(item)
        return loaded


def check_all(
    items: Sequence[T],
    check: Callable[[T], Problem | None],
    description: str,
    show_progress: bool = False,
) -> list[Problem]:
    """The problems `check` finds in every item (e.g. probing each video), in item order, run in
    a thread pool (PyAV reads outside the GIL) behind a progress bar."""
    problems = []
    with (
        ThreadPoolExecutor(os.cpu_count() or 2) as pool,
        progress_bar(disable=not show_progress) as bar,
    ):
        task = bar.add_task(description, total=len(items))
        for future in [pool.submit(check, item) for item in items]:
            if (problem := future.result()) is not None:
                problems.append(problem)
            bar.advance(task)
    return problems
