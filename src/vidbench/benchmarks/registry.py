"""Every benchmark vidbench knows: the built-in ones, listed here, and installed ones.

A benchmark is one folder whose `__init__.py` exports a `Benchmark` value (vidbench/benchmark.py).
A built-in one is one more line in `BUILT_IN`; a benchmark in a package of its own registers its
value under the `vidbench.benchmarks` entry point group, e.g. in its pyproject.toml:

    [project.entry-points."vidbench.benchmarks"]
    toy = "toybench:BENCHMARK"

A declared benchmark (a folder with benchmark.toml, benchmarks/custom/) is a value too, built
from its file when a task name `custom:DIR` names it; the built-in `custom` value stands for all of
them in `vidbench validate custom DIR` and `vidbench tasks`.

Only the command line (cli.py) imports this module; it hands the values (or what they hold) to
the runner, the review app, the HTML report and the analyses, which import no benchmark.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

from rich.markup import escape

from vidbench.annotate.adapters import Adapters
from vidbench.benchmark import Benchmark
from vidbench.benchmarks.autoeval_video import BENCHMARK as AUTOEVAL_VIDEO
from vidbench.benchmarks.custom import BENCHMARK as CUSTOM
from vidbench.benchmarks.fourd import BENCHMARK as FOURD
from vidbench.benchmarks.mmworld import BENCHMARK as MMWORLD
from vidbench.console import err
from vidbench.core.errors import ConfigError
from vidbench.export.source import ExportSource
from vidbench.runner.run import Run
from vidbench.runner.run_config import RunConfig
from vidbench.tasks.base import Task
from vidbench.tasks.registry import TaskEntry, build_task

BUILT_IN: tuple[Benchmark, ...] = (FOURD, AUTOEVAL_VIDEO, MMWORLD, CUSTOM)
ENTRY_POINTS = "vidbench.benchmarks"


@cache
def benchmarks() -> tuple[Benchmark, ...]:
    """The built-in benchmarks, then every installed one (entry point order)."""
    found = list(BUILT_IN)
    for entry in metadata.entry_points(group=ENTRY_POINTS):
        plugin = f"benchmark plugin {entry.name} ({entry.value})"
        try:
            value = entry.load()
        except Exception as e:  # any error of a plugin's own code: name it, keep the others
            _skip(plugin, f"it does not load ({type(e).__name__}: {e})")
            continue
        if not isinstance(value, Benchmark):
            kind = type(value).__name__
            _skip(plugin, f"its value is of type {kind}, not vidbench.benchmark.Benchmark")
            continue
        found.append(value)
    _check_unique(found)
    return tuple(found)


def _skip(plugin: str, why: str) -> None:
    err.print(f"[yellow]skipped[/] {escape(plugin)}: {escape(why)}", highlight=False)


def _check_unique(found: list[Benchmark]) -> None:
    """No two benchmarks share a name, and no two a task name."""
    for what, names_of in (("benchmark", lambda b: [b.name]), ("task", lambda b: list(b.tasks))):
        owners: dict[str, str] = {}
        for benchmark in found:
            for name in names_of(benchmark):
                if name in owners:
                    raise ConfigError(
                        f"{what} name {name!r} is claimed by two benchmarks ({owners[name]} and "
                        f"{benchmark.title})"
                    )
                owners[name] = benchmark.title


def by_name(name: str) -> Benchmark:
    for benchmark in benchmarks():
        if benchmark.name == name:
            return benchmark
    known = ", ".join(b.name for b in benchmarks())
    raise ConfigError(f"unknown benchmark {name!r}; known: {known}")


def review_adapters() -> Adapters:
    """The review app's view of the benchmarks: each one's importers, exports and links."""
    return Adapters([b.review for b in benchmarks() if b.review is not None])


def all_tasks() -> dict[str, TaskEntry]:
    return {name: entry for b in benchmarks() for name, entry in b.tasks.items()}


def variant_families() -> dict[str, str]:
    return {k: v for b in benchmarks() for k, v in b.variant_families.items()}


def benchmark_of_task(task: str) -> Benchmark:
    base = task.partition(":")[0]
    for benchmark in benchmarks():
        if base in benchmark.tasks:
            return benchmark
    raise ConfigError(f"unknown task {base!r}; known: {', '.join(all_tasks())}")


def _entries(name: str) -> tuple[Mapping[str, TaskEntry], str]:
    """The task entries a name resolves against, and the name as they know it: `custom:DIR`
    against the benchmark declared in DIR, any other name against every registered task."""
    from vidbench.benchmarks.custom import names

    if names.is_declared(name):
        from vidbench.benchmarks.custom.declared import resolve_declared

        benchmark, local = resolve_declared(name)
        return benchmark.tasks, local
    return all_tasks(), name


def get_task(name: str, generation: Mapping[str, Any] | None = None, **overrides: object) -> Task:
    """The task a name denotes, with FrameSpec fields and generation settings overridden."""
    entries, local = _entries(name)
    return build_task(entries, local, dict(generation or {}), **overrides)


def stored_task_name(name: str) -> str:
    """The name a run keeps in run.json: as given, but a `custom:DIR` with its folder made
    absolute, so the stored run re-opens its benchmark from any working directory."""
    from vidbench.benchmarks.custom import names

    return names.split_name(name).canonical if names.is_declared(name) else name


def task_of(config: RunConfig) -> Task:
    """The task a run configuration evaluates, with its frame and generation overrides (the
    configuration's task name becomes the one to store: `stored_task_name`)."""
    config.task = stored_task_name(config.task)
    return get_task(config.task, config.generation, **config.frame_overrides())


def export_sources(folder: Path, name: str | None = None) -> list[ExportSource]:
    """For `vidbench export`: the benchmark NAME (default: every one) with its tasks; a folder
    holding benchmark.toml is the benchmark it declares."""
    from vidbench.benchmarks.custom.spec import SPEC_FILE

    if name == CUSTOM.name or (name is None and (folder / SPEC_FILE).is_file()):
        from vidbench.benchmarks.custom.export import export_source

        return [export_source(folder)]
    chosen = [by_name(name)] if name else [b for b in benchmarks() if b is not CUSTOM]
    return [ExportSource(b.name, b.title, [(t, get_task(t)) for t in b.tasks]) for b in chosen]


def open_run(config: RunConfig, console: Any = None) -> Run:
    """A Run of the task its configuration names."""
    return Run(config, task_of(config), console)
