"""Every benchmark vidbench ships, by name: its tasks and its validator.

Only the command line (cli.py) imports this module: the framework (runner, report, scoring,
tasks) is handed a Task and never imports a benchmark. A new benchmark is a folder beside
fourd/, mmworld/ and autoeval_video/ with its tasks (a dict of `TaskEntry`) and a `validate`
function, listed here.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from vidbench.benchmarks.autoeval_video import task as autoeval_video
from vidbench.benchmarks.fourd import variants as fourd
from vidbench.benchmarks.mmworld import variants as mmworld
from vidbench.runner.run import Run
from vidbench.runner.run_config import RunConfig
from vidbench.tasks.base import Task
from vidbench.tasks.problems import Problem
from vidbench.tasks.registry import TaskEntry, build_task

TASKS: dict[str, TaskEntry] = {**fourd.TASKS, **autoeval_video.TASKS, **mmworld.TASKS}
# What the placeholders of variant families stand for, for `vidbench tasks` and errors.
VARIANT_FAMILIES: dict[str, str] = {
    **fourd.VARIANT_FAMILIES,
    **mmworld.VARIANT_FAMILIES,
    **autoeval_video.VARIANT_FAMILIES,
}


def get_task(name: str, generation: dict[str, Any] | None = None, **overrides: object) -> Task:
    """The task a name denotes, with FrameSpec fields and generation settings overridden."""
    return build_task(TASKS, name, generation, **overrides)


def task_of(config: RunConfig) -> Task:
    """The task a run configuration evaluates, with its frame and generation overrides."""
    return get_task(config.task, config.generation, **config.frame_overrides())


def open_run(config: RunConfig, console: Any = None) -> Run:
    """A Run of the task its configuration names."""
    return Run(config, task_of(config), console)


# validate(root, show_progress, frames) -> every problem (record, path, message), never stopping
# at the first; `frames`: the frames per view (or clip) a task will sample, default the
# benchmark's own.
Validator = Callable[..., list[Problem]]


def _fourd(root: Path, show_progress: bool = False, frames: int | None = None) -> list[Problem]:
    from vidbench.benchmarks.fourd.validate import validate

    return validate(root, show_progress, frames)


def _autoeval(root: Path, show_progress: bool = False, frames: int | None = None) -> list[Problem]:
    from vidbench.benchmarks.autoeval_video.validate import validate

    return validate(root, show_progress, frames)


def _mmworld(root: Path, show_progress: bool = False, frames: int | None = None) -> list[Problem]:
    from vidbench.benchmarks.mmworld.validate import validate

    return validate(root, show_progress, frames)


def _fourd_probe_figures(results: Sequence[Path], out: Path) -> list[Path]:
    from vidbench.benchmarks.fourd.probe.figures import knob_figures

    return knob_figures(results, out)


# `vidbench figures` draws these too: (results directories, folder) -> the files written; each
# draws nothing for runs that are not its benchmark's kind.
FIGURES: list[Callable[[Sequence[Path], Path], list[Path]]] = [_fourd_probe_figures]


VALIDATORS: dict[str, Validator] = {
    "4dbench": _fourd,
    "autoeval-video": _autoeval,
    "mmworld": _mmworld,
}
