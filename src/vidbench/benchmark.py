"""What a benchmark brings to vidbench: one `Benchmark` value.

Its core is what a run needs: its names, its tasks and their variants, `validate`, and the record
fields its samples are grouped by. registry.py finds every registered value (the built-in ones
and the installed ones), and the runner, the HTML report and the analyses read the core from it.

What a benchmark adds to one part of vidbench beside its core registers beside it, in `parts`:
its commands (`cli_options.Commands`), its items in the review app (`annotate.adapters.
ReviewAdapter`), its figures (`report.figures.FigureSpec`), how a folder of it is exported
(`export.source.FolderExport`). Each such type is a `BenchmarkPart` defined by the part of
vidbench that uses it, which reads the registered benchmarks' parts of its own type
(`Benchmark.parts_of`); this module, and the runner, know none of them.

A value must be cheap to build: everything heavy (loaders, tasks, models, commands' modules) is
imported inside the functions it names (`extras.lazy`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from vidbench.tasks.problems import Problem
from vidbench.tasks.registry import TaskEntry

# validate(root, show_progress, frames) -> every problem (record, path, message), never stopping
# at the first; `frames`: the frames per view (or clip) a task will sample, default the
# benchmark's own.
Validator = Callable[[Path, bool, "int | None"], list[Problem]]


class BenchmarkPart:
    """What a benchmark adds to one part of vidbench beside its core. Each part of vidbench
    that takes something from benchmarks defines its own subclass and reads the parts of that
    type (`Benchmark.parts_of`)."""


Part = TypeVar("Part", bound=BenchmarkPart)


@dataclass(frozen=True)
class Declared:
    """What a task name of a declared benchmark (`custom:DIR[:VARIANTS]`) denotes: the benchmark
    built from its folder's files, the task name as that benchmark's entries know it, and the
    name a run keeps in run.json (the folder made absolute, so a stored run re-opens its
    benchmark from any working directory)."""

    benchmark: Benchmark
    task: str
    stored: str


@dataclass(frozen=True)
class Benchmark:
    name: str  # as `vidbench validate NAME DIR` takes it, e.g. "4dbench"
    title: str  # as people write it, e.g. "4D-Bench"
    tasks: Mapping[str, TaskEntry]  # task base name -> entry (tasks/registry.py)
    validate: Validator
    # what the placeholders of variant families stand for (`vidbench tasks`, errors)
    variant_families: Mapping[str, str] = field(default_factory=dict)
    # record fields (or sample metadata) its samples are grouped by in the HTML report
    sample_groups: tuple[str, ...] = ()
    # what it adds to the other parts of vidbench: commands, review adapter, figures, exports
    parts: tuple[BenchmarkPart, ...] = ()
    # a benchmark that stands for many, each declared in a folder: the task names `NAME:...`
    # are resolved by this function (the built-in `custom`: `custom:DIR`)
    declared: Callable[[str], Declared] | None = None

    def parts_of(self, kind: type[Part]) -> list[Part]:
        """Its parts of one type, e.g. `parts_of(ReviewAdapter)`."""
        return [part for part in self.parts if isinstance(part, kind)]
