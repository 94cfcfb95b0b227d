"""4D-Bench (4D-Bench paper): multi-view videos of animated 3D objects; multiple-choice QA in
five subtasks and captioning. README.md holds the protocol facts the code cites."""

from __future__ import annotations

from pathlib import Path

from vidbench.benchmark import Benchmark, CommandGroups
from vidbench.benchmarks.fourd.variants import TASKS, VARIANT_FAMILIES
from vidbench.tasks.problems import Problem


def _validate(root: Path, show_progress: bool = False, frames: int | None = None) -> list[Problem]:
    from vidbench.benchmarks.fourd.validate import validate

    return validate(root, show_progress, frames)


def _commands(groups: CommandGroups) -> None:
    from vidbench.benchmarks.fourd import commands

    commands.register(groups)  # synth 4d, demo, score-captions, curate 4d ...


BENCHMARK = Benchmark(
    name="4dbench",
    title="4D-Bench",
    tasks=TASKS,
    validate=_validate,
    variant_families=VARIANT_FAMILIES,
    commands=_commands,
    sample_groups=("subtask",),
)
