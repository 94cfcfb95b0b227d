"""What a benchmark brings to vidbench: one `Benchmark` value.

Each benchmark folder's `__init__.py` exports one `Benchmark` (`BENCHMARK`): its names, its tasks
and their variants, `validate`, the commands it adds to the CLI, how its items enter the review
app and how people's work comes back out as its data (`review`), its figures, and the record
fields its samples are grouped by. `benchmarks/registry.py` lists the built-in values and finds
installed ones (the `vidbench.benchmarks` entry point group); the CLI, the review app, the HTML
report, the analyses and the figures iterate over those values and import no benchmark module.

A value must be cheap to build: everything heavy (loaders, tasks, models, commands' modules) is
imported inside the functions it names.
"""

from __future__ import annotations

import argparse
import importlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from vidbench.annotate.adapters import ReviewAdapter
from vidbench.report.figures import FigureSpec
from vidbench.tasks.problems import Problem
from vidbench.tasks.registry import TaskEntry

# validate(root, show_progress, frames) -> every problem (record, path, message), never stopping
# at the first; `frames`: the frames per view (or clip) a task will sample, default the
# benchmark's own.
Validator = Callable[[Path, bool, "int | None"], list[Problem]]


class CommandGroups:
    """Where a benchmark adds its commands: `vidbench COMMAND ...` (`top`), or under a command
    that several benchmarks share, e.g. `vidbench curate 4d ...` (`group("curate", ...)`)."""

    def __init__(self, top: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
        self.top = top
        self._groups: dict[str, argparse._SubParsersAction[argparse.ArgumentParser]] = {}

    def group(self, name: str, help: str) -> argparse._SubParsersAction[argparse.ArgumentParser]:
        """The subcommands of `vidbench NAME` (made by the first benchmark that asks)."""
        if name not in self._groups:
            parser = self.top.add_parser(name, help=help)
            self._groups[name] = parser.add_subparsers(dest=f"{name}_benchmark", required=True)
        return self._groups[name]


CommandAdder = Callable[[CommandGroups], None]


# A Benchmark value names its validator, commands and figures by module and name, imported only
# when called, so building the value imports nothing heavy. One helper per kind: each keeps the
# kind's signature, so what a benchmark names is checked where it is called.


def lazy_validator(module: str, name: str = "validate") -> Validator:
    """`module`'s `name` (a Validator), imported when first called."""

    def validate(root: Path, show_progress: bool, frames: int | None) -> list[Problem]:
        found: Validator = getattr(importlib.import_module(module), name)
        return found(root, show_progress, frames)

    validate.__name__ = validate.__qualname__ = f"{module}.{name}"
    return validate


def lazy_commands(module: str, name: str = "register") -> CommandAdder:
    """`module`'s `name` (a CommandAdder), imported when first called."""

    def register(groups: CommandGroups) -> None:
        found: CommandAdder = getattr(importlib.import_module(module), name)
        found(groups)

    register.__name__ = register.__qualname__ = f"{module}.{name}"
    return register


def lazy_figure(module: str, name: str) -> Callable[[Sequence[Path], Path], list[Path]]:
    """`module`'s `name` (a FigureSpec's `draw`), imported when first called."""

    def draw(runs: Sequence[Path], folder: Path) -> list[Path]:
        found: Callable[[Sequence[Path], Path], list[Path]]
        found = getattr(importlib.import_module(module), name)
        return found(runs, folder)

    draw.__name__ = draw.__qualname__ = f"{module}.{name}"
    return draw


# the shared `curate` command's help (every benchmark that builds data adds itself under it)
CURATE_HELP = "build a benchmark's data from your own videos or assets"


@dataclass(frozen=True)
class Benchmark:
    name: str  # as `vidbench validate NAME DIR` takes it, e.g. "4dbench"
    title: str  # as people write it, e.g. "4D-Bench"
    tasks: Mapping[str, TaskEntry]  # task base name -> entry (tasks/registry.py)
    validate: Validator
    # what the placeholders of variant families stand for (`vidbench tasks`, errors)
    variant_families: Mapping[str, str] = field(default_factory=dict)
    commands: CommandAdder | None = None  # adds its own CLI commands (curation, rules, ...)
    review: ReviewAdapter | None = None  # its items in the review app, and their exports
    figures: tuple[FigureSpec, ...] = ()  # figures of its runs beyond the generic bars and curves
    # record fields (or sample metadata) its samples are grouped by in the HTML report
    sample_groups: tuple[str, ...] = ()
