"""MMWorld (MMWorld paper): multi-discipline, multi-faceted video QA. README.md holds the
protocol facts the code cites."""

from __future__ import annotations

from pathlib import Path

from vidbench.benchmark import Benchmark, CommandGroups
from vidbench.benchmarks.mmworld.variants import TASKS, VARIANT_FAMILIES
from vidbench.tasks.problems import Problem


def _validate(root: Path, show_progress: bool = False, frames: int | None = None) -> list[Problem]:
    from vidbench.benchmarks.mmworld.validate import validate

    return validate(root, show_progress, frames)


def _commands(groups: CommandGroups) -> None:
    from vidbench.benchmarks.mmworld.curate import commands

    commands.register(groups)  # curate mmworld ...


BENCHMARK = Benchmark(
    name="mmworld",
    title="MMWorld",
    tasks=TASKS,
    validate=_validate,
    variant_families=VARIANT_FAMILIES,
    commands=_commands,
    sample_groups=("discipline",),
)
