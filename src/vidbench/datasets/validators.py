"""`vidbench validate BENCHMARK DIR`: benchmark name -> a function listing every problem."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from vidbench.tasks.problems import Problem


def _fourd(root: Path, show_progress: bool = False, frames: int | None = None) -> list[Problem]:
    from vidbench.benchmarks.fourd.validate import validate

    return validate(root, show_progress, frames)


def _autoeval(root: Path, show_progress: bool = False, frames: int | None = None) -> list[Problem]:
    from vidbench.benchmarks.autoeval_video.loader import validate

    return validate(root, show_progress, frames)


def _mmworld(root: Path, show_progress: bool = False, frames: int | None = None) -> list[Problem]:
    from vidbench.benchmarks.mmworld.validate import validate

    return validate(root, show_progress, frames)


# Each validator returns all problems (record, path, message), never stopping at the first;
# `frames`: the frames per view (or clip) a task will sample, default the benchmark's own.
VALIDATORS: dict[str, Callable[..., list[Problem]]] = {
    "4dbench": _fourd,
    "autoeval-video": _autoeval,
    "mmworld": _mmworld,
}
