"""AutoEval-Video (AutoEval-Video paper): open-ended video QA judged by an LLM following
per-instance rules. README.md holds the protocol facts the code cites."""

from __future__ import annotations

from pathlib import Path

from vidbench.benchmark import Benchmark, CommandGroups
from vidbench.benchmarks.autoeval_video.task import TASKS, VARIANT_FAMILIES
from vidbench.tasks.problems import Problem


def _validate(root: Path, show_progress: bool = False, frames: int | None = None) -> list[Problem]:
    from vidbench.benchmarks.autoeval_video.validate import validate

    return validate(root, show_progress, frames)


def _commands(groups: CommandGroups) -> None:
    from vidbench.benchmarks.autoeval_video import commands

    commands.register(groups)  # judge autoeval-video, judge-agreement, rules ...


BENCHMARK = Benchmark(
    name="autoeval-video",
    title="AutoEval-Video",
    tasks=TASKS,
    validate=_validate,
    variant_families=VARIANT_FAMILIES,
    commands=_commands,
    sample_groups=("dimension", "category"),
)
