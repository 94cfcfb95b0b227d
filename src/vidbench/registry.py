"""Every benchmark vidbench knows, and the tasks their names denote.

The built-in benchmarks are named in `BUILT_IN` the way an installed one names itself: as an
entry point, `module:attribute`, loaded when first asked for. An installed benchmark registers its
value under the `vidbench.benchmarks` entry point group, e.g. in its pyproject.toml:

    [project.entry-points."vidbench.benchmarks"]
    toy = "toybench:BENCHMARK"

So the framework imports no benchmark module, and the runner, the HTML report, the analyses, the
review app and the command line all read the benchmarks from here. A plugin that does not load,
or that claims a name a benchmark registered before it holds (a benchmark name, a task name, a
variant family with another meaning), is refused with both sources named; the others work.

A declared benchmark (a folder with benchmark.toml, benchmarks/custom/) is a value too, built from
its file when a task name `custom:DIR` names it (`Benchmark.declared`); the built-in `custom`
value stands for all of them in `vidbench validate custom DIR` and `vidbench tasks`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from typing import Any

from rich.markup import escape

from vidbench.benchmark import Benchmark, BenchmarkPart, Declared, Part
from vidbench.console import err
from vidbench.core.errors import ConfigError
from vidbench.tasks.base import Task
from vidbench.tasks.registry import TaskEntry, build_task

ENTRY_POINTS = "vidbench.benchmarks"
# the built-in benchmarks, in the order `vidbench tasks` lists them: one line each
BUILT_IN = (
    "vidbench.benchmarks.fourd:BENCHMARK",
    "vidbench.benchmarks.autoeval_video:BENCHMARK",
    "vidbench.benchmarks.mmworld:BENCHMARK",
    "vidbench.benchmarks.custom:BENCHMARK",
)


@dataclass(frozen=True)
class Registered:
    benchmark: Benchmark
    source: str  # where it came from, for messages: "MODULE:NAME" or "plugin NAME (MODULE:NAME)"


@cache
def registered() -> tuple[Registered, ...]:
    """The built-in benchmarks, then every installed one (entry point order) that loads and
    claims no name an earlier one holds."""
    found: list[Registered] = []
    for value in BUILT_IN:
        built_in = Registered(metadata.EntryPoint("", value, ENTRY_POINTS).load(), value)
        clash = _clash(built_in.benchmark, found)
        if clash is not None:
            raise ConfigError(f"built-in benchmark {value}: {clash}")
        found.append(built_in)
    for entry in metadata.entry_points(group=ENTRY_POINTS):
        plugin = f"plugin {entry.name} ({entry.value})"
        try:
            value = entry.load()
        except Exception as e:  # any error of a plugin's own code: name it, keep the others
            _refuse(plugin, f"it does not load ({type(e).__name__}: {e})")
            continue
        if not isinstance(value, Benchmark):
            kind = type(value).__name__
            _refuse(plugin, f"its value is of type {kind}, not a vidbench Benchmark")
            continue
        malformed = _malformed(value)
        if malformed is not None:  # it would break every command that lists benchmarks
            _refuse(plugin, malformed)
            continue
        clash = _clash(value, found)
        if clash is not None:
            _refuse(plugin, clash)
            continue
        found.append(Registered(value, plugin))
    return tuple(found)


def _refuse(plugin: str, why: str) -> None:
    message = f"[yellow]skipped[/] benchmark {escape(plugin)}: {escape(why)}"
    err.print(message, highlight=False, soft_wrap=True)


def _malformed(benchmark: Benchmark) -> str | None:
    """The first field of a plugin's Benchmark value that is not of the type it should be (a
    dataclass does not check them), said; None when every one is."""
    b = benchmark

    def all_of(kind: type, values: Iterable[object]) -> bool:
        return all(isinstance(value, kind) for value in values)

    checks: list[tuple[str, str, Callable[[], bool]]] = [
        ("name", "a non-empty str", lambda: isinstance(b.name, str) and bool(b.name)),
        ("title", "a str", lambda: isinstance(b.title, str)),
        ("tasks", "a mapping of names to TaskEntry values", lambda: isinstance(b.tasks, Mapping)
         and all_of(str, b.tasks) and all_of(TaskEntry, b.tasks.values())),
        ("validate", "a function", lambda: callable(b.validate)),
        ("variant_families", "a mapping of str to str",
         lambda: isinstance(families := b.variant_families, Mapping)
         and all_of(str, families) and all_of(str, families.values())),
        ("sample_groups", "a tuple of str",
         lambda: isinstance(b.sample_groups, tuple) and all_of(str, b.sample_groups)),
        ("parts", "a tuple of BenchmarkParts",
         lambda: isinstance(b.parts, tuple) and all_of(BenchmarkPart, b.parts)),
        ("declared", "None or a function", lambda: b.declared is None or callable(b.declared)),
    ]  # fmt: skip
    for field, should, fits in checks:
        if not fits():
            kind = type(getattr(b, field)).__name__
            return f"its {field} must be {should} (it is a {kind})"
    return None


def _claims(benchmark: Benchmark) -> dict[str, str | None]:
    """Every name a benchmark claims -> the meaning that must agree (None: the name alone)."""
    claims: dict[str, str | None] = {f"benchmark name {benchmark.name!r}": None}
    tasks = [*benchmark.tasks, *([benchmark.name] if benchmark.declared else [])]
    claims |= {f"task name {task!r}": None for task in tasks}
    claims |= {f"variant family {k!r}": v for k, v in benchmark.variant_families.items()}
    return claims


def _clash(benchmark: Benchmark, found: list[Registered]) -> str | None:
    """The first name `benchmark` claims that a registered one holds otherwise, said with the
    holder's source; None when there is none."""
    mine = _claims(benchmark)
    for held in found:
        for name, meaning in _claims(held.benchmark).items():
            if name in mine and (meaning is None or mine[name] != meaning):
                return f"its {name} is {held.benchmark.title}'s ({held.source})"
    return None


def source_of(benchmark: Benchmark) -> str:
    """Where a registered benchmark came from, for messages: "MODULE:NAME" for a built-in one,
    "plugin NAME (MODULE:NAME)" for an installed one."""
    return next(r.source for r in registered() if r.benchmark is benchmark)


def benchmarks() -> tuple[Benchmark, ...]:
    return tuple(r.benchmark for r in registered())


def by_name(name: str) -> Benchmark:
    for benchmark in benchmarks():
        if benchmark.name == name:
            return benchmark
    known = ", ".join(b.name for b in benchmarks())
    raise ConfigError(f"unknown benchmark {name!r}; known: {known}")


def parts(kind: type[Part]) -> list[Part]:
    """Every registered benchmark's parts of one type (their figures, review adapters, ...)."""
    return [part for benchmark in benchmarks() for part in benchmark.parts_of(kind)]


def sample_groups() -> list[str]:
    """The record fields samples are grouped by, every benchmark's, in order, once each."""
    return list(dict.fromkeys(field for b in benchmarks() for field in b.sample_groups))


def all_tasks() -> dict[str, TaskEntry]:
    return {name: entry for b in benchmarks() for name, entry in b.tasks.items()}


def variant_families() -> dict[str, str]:
    return {k: v for b in benchmarks() for k, v in b.variant_families.items()}


def _declared(name: str) -> Declared | None:
    """What a declared benchmark's task name (`custom:DIR`) denotes; None for another name."""
    prefix = name.partition(":")[0]
    for benchmark in benchmarks():
        if benchmark.declared is not None and benchmark.name == prefix:
            return benchmark.declared(name)
    return None


def get_task(name: str, generation: Mapping[str, Any] | None = None, **overrides: object) -> Task:
    """The task a name denotes, e.g. `get_task("4dbench-qa:frames-3")`, with FrameSpec fields
    (`frames=3`, `sampler="linspace"`) and generation settings overridden."""
    declared = _declared(name)
    entries, local = (declared.benchmark.tasks, declared.task) if declared else (all_tasks(), name)
    return build_task(entries, local, dict(generation or {}), **overrides)


def stored_task_name(name: str) -> str:
    """The name a run keeps in run.json: as given, but a `custom:DIR` with its folder made
    absolute, so the stored run re-opens its benchmark from any working directory."""
    declared = _declared(name)
    return declared.stored if declared else name
