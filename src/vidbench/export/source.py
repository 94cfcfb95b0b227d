"""What `vidbench export` is handed for a folder: a benchmark, its tasks, and what its card
needs besides the data (export/commands.py builds it from the registered benchmarks; export/
imports no benchmark)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from vidbench.benchmark import BenchmarkPart
from vidbench.tasks.base import Task


@dataclass(frozen=True)
class ExportSource:
    benchmark: str  # e.g. 4dbench, mmworld, custom
    title: str
    tasks: list[tuple[str, Task]]  # (config name, task) of every task that may have data
    license: str | None = None  # the data's own (a declared benchmark's `license`)
    description: str = ""
    files: dict[str, Path] = field(default_factory=dict)  # copied to OUT/NAME as they are
    scoring: dict[str, str] = field(default_factory=dict)  # config -> how it is scored (card)


@dataclass(frozen=True)
class FolderExport(BenchmarkPart):
    """A benchmark part: how a benchmark that a folder declares in files of its own (the
    built-in `custom`: benchmark.toml) is exported: whether a folder declares one, and what of
    it to export (its card's license, description and files besides the data)."""

    declares: Callable[[Path], bool]
    source: Callable[[Path], ExportSource]
