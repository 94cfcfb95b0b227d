"""What `vidbench export` publishes of a declared benchmark: its one task, its license and
description, and its benchmark.toml (and judge prompt file), so the export is itself a declared
benchmark: `vidbench run custom:OUT` reads its rows back from the Parquet files."""

from __future__ import annotations

from pathlib import Path

from vidbench.benchmarks.custom.declared import declared_benchmark
from vidbench.benchmarks.custom.spec import SPEC_FILE, read_spec
from vidbench.export.source import ExportSource
from vidbench.tasks.registry import build_task


def declares(folder: Path) -> bool:
    return (folder / SPEC_FILE).is_file()


def export_source(folder: Path) -> ExportSource:
    folder = Path(folder).expanduser().resolve()
    spec = read_spec(folder)
    benchmark = declared_benchmark(folder)
    [name] = benchmark.tasks
    files = {SPEC_FILE: spec.file}
    if spec.judge_prompt_file is not None:
        files[spec.judge_prompt_file] = folder / spec.judge_prompt_file
    return ExportSource(
        benchmark="custom",
        title=spec.title,
        tasks=[(spec.name, build_task(benchmark.tasks, name))],
        license=spec.license,
        description=spec.description,
        files=files,
    )
