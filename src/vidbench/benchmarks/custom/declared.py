"""A declared benchmark as one more `Benchmark` value, built from its folder's benchmark.toml.

The registry (vidbench/registry.py) resolves a task name `custom:DIR[:VARIANTS]` (names.py)
through the built-in `custom` value's `declared`, `resolve_declared`, against the value declared in
DIR: one task named after the benchmark, its frames from the spec, the frame
variants `frames-N` and the samplers, the parser variants. Values are cached per folder and
rebuilt when benchmark.toml changes.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path

from vidbench.benchmark import Benchmark, Declared
from vidbench.benchmarks.custom.names import DeclaredName, split_name
from vidbench.benchmarks.custom.spec import PARSERS, SAMPLERS, SPEC_FILE, Spec, read_spec
from vidbench.core.errors import ConfigError
from vidbench.extras import lazy
from vidbench.media.spec import FrameSpec
from vidbench.tasks.base import Task
from vidbench.tasks.registry import TaskEntry, TaskRequest

VARIANTS = ("frames-N", *SAMPLERS, *PARSERS)
_CACHE: dict[Path, tuple[int, Benchmark]] = {}


def frame_modifier(spec: FrameSpec, modifier: str) -> FrameSpec | None:
    kind, _, count = modifier.partition("-")
    if kind == "frames" and count.isdigit():
        return spec.with_(frames=int(count))
    if modifier in SAMPLERS:
        return spec.with_(sampler=modifier)
    return None


def _make(spec: Spec, folder: Path, request: TaskRequest) -> Task:
    from vidbench.benchmarks.custom.task import DeclaredTask

    unknown = [m for m in request.modifiers if m not in PARSERS]
    if unknown or len(request.modifiers) > 1:
        raise ConfigError(
            f"custom:{folder}: unknown or repeated variant {(unknown or request.modifiers)[0]!r}; "
            f"known: {', '.join(VARIANTS)}"
        )
    parser = request.modifiers[0] if request.modifiers else spec.parser
    if parser != spec.parser and not spec.multiple_choice:
        raise ConfigError(f"custom:{folder}: a parser variant is for multiple-choice benchmarks")
    variants = request.name.partition(":")[2]
    name = f"custom:{folder}" + (f":{variants}" if variants else "")
    return DeclaredTask(name, spec, folder, request.spec, parser)


def declared_benchmark(folder: Path) -> Benchmark:
    """The Benchmark value declared in FOLDER/benchmark.toml (an absolute folder)."""
    file = folder / SPEC_FILE
    stamp = file.stat().st_mtime_ns if file.is_file() else -1
    cached = _CACHE.get(folder)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    spec = read_spec(folder)
    entry = TaskEntry(partial(_make, spec, folder), spec.frame_spec, frame_modifier, VARIANTS)
    value = Benchmark(
        name=f"custom:{spec.name}",
        title=spec.title,
        tasks={spec.name: entry},
        validate=lazy("vidbench.benchmarks.custom.validate", "validate"),
        sample_groups=spec.groups,
    )
    _CACHE[folder] = (stamp, value)
    return value


def resolve_declared(name: str) -> Declared:
    """The value a `custom:DIR[:VARIANTS]` name denotes, the name its task entries know
    (`<benchmark name>[:VARIANTS]`) and the name a run keeps (DIR made absolute)."""
    declared: DeclaredName = split_name(name)
    folder = declared.folder.expanduser().resolve()
    if not folder.is_dir():
        raise ConfigError(
            f"custom:{folder}: no such folder (moved? a stored run re-opens it from its new "
            "place: vidbench run custom:NEW_FOLDER --out RESULTS --stage score)"
        )
    benchmark = declared_benchmark(folder)
    [local] = benchmark.tasks
    variants = f":{declared.variants}" if declared.variants else ""
    return Declared(benchmark, local + variants, declared.canonical)
