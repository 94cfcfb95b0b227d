"""`vidbench export DIR --to hf OUT`: the registered benchmarks that may have data in DIR
(`export_sources`), the one whose data is there, written as a Hugging Face dataset folder."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.markup import escape

from vidbench.console import err
from vidbench.core.errors import ConfigError, DataError
from vidbench.export.hf import export_hf
from vidbench.export.request import ExportRequest, ExportTask
from vidbench.export.source import ExportSource, FolderExport
from vidbench.registry import benchmarks, by_name, get_task
from vidbench.tasks.data import load_samples
from vidbench.tasks.problems import Problem


def export_sources(folder: Path, name: str | None = None) -> list[ExportSource]:
    """The benchmark NAME (default: every one) with its tasks; a folder that declares a
    benchmark in files of its own (benchmark.toml) is the benchmark it declares."""
    chosen = [by_name(name)] if name else list(benchmarks())
    for benchmark in chosen:
        for part in benchmark.parts_of(FolderExport):
            if name or part.declares(folder):
                return [part.source(folder)]
    return [
        ExportSource(b.name, b.title, [(t, get_task(t)) for t in b.tasks])
        for b in chosen
        if b.tasks
    ]


def _with_data(source: ExportSource, folder: Path) -> tuple[list[ExportTask], list[Problem]]:
    """The source's tasks that find samples in `folder`, and the problems of those that find
    none (a task with no sample there is not exported: e.g. MMWorld's main set beside its
    synthetic subsets)."""
    found, problems = [], []
    for config, task in source.tasks:
        try:
            loaded = load_samples(task, folder)
        except DataError:  # not this task's data
            continue
        if loaded.items:
            judged = task.uses_judge and not task.judge_optional
            name = task.name.partition(":")[0]
            found.append(ExportTask(config, name, loaded, task.protocol, judged))
        else:
            problems += loaded.problems
    return found, problems


def _chosen(folder: Path, sources: list[ExportSource]) -> tuple[ExportSource, list[ExportTask]]:
    found, problems = [], []
    for source in sources:
        tasks, empty = _with_data(source, folder)
        if tasks:
            found.append((source, tasks))
        problems += empty
    if not found:
        names = ", ".join(s.benchmark for s in sources)
        why = "".join(f"\n  {p}" for p in problems[:10])
        raise ConfigError(
            f"{folder}: no benchmark's data found here (looked for {names}); give the data "
            f"folder itself, or --benchmark NAME{why}"
        )
    if len(found) > 1:
        several = ", ".join(s.benchmark for s, _ in found)
        raise ConfigError(f"{folder}: holds data of {several}; choose one with --benchmark")
    return found[0]


def _cmd_export(args: argparse.Namespace) -> int:
    folder = Path(args.dir)
    if not folder.is_dir():
        raise ConfigError(f"{folder}: no such folder")
    source, tasks = _chosen(folder, export_sources(folder, args.benchmark))
    license_id = args.license or source.license
    if not license_id:
        raise ConfigError(
            "vidbench export: give --license ID (the card's license field, a Hugging Face "
            "license id such as cc-by-4.0, or 'other' / 'unknown')"
        )
    request = ExportRequest(
        source=folder,
        out=Path(args.out),
        benchmark=source.benchmark,
        title=args.title or source.title,
        license=license_id,
        tasks=tasks,
        description=source.description,
        files=source.files,
        skip_bad=args.skip_bad,
        scoring=source.scoring,
    )
    exported = export_hf(request)
    for problem in exported.problems:
        err.print(f"[yellow]left out[/] {escape(str(problem))}", highlight=False)
    parts = ", ".join(f"{name} {c.rows}" for name, c in exported.configs.items())
    err.print(
        f"exported {parts} rows and {exported.videos} videos to {escape(str(exported.out))}; "
        f"load it with datasets.load_dataset({str(exported.out)!r}, CONFIG)",
        highlight=False,
    )
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "export",
        help="publish a benchmark's data as a Hugging Face dataset folder",
        description="Write DIR's benchmark data (every task with data there) as OUT: Parquet "
        "rows, the videos and a dataset card that the Hugging Face datasets library loads; "
        "`vidbench run TASK --data OUT` reads it back. See docs/export.md.",
    )
    p.add_argument(
        "dir", metavar="DIR", help="a data folder, curation output or declared benchmark"
    )
    p.add_argument("--to", choices=["hf"], required=True, help="hf: a Hugging Face dataset folder")
    p.add_argument("out", metavar="OUT", help="the folder to write (new or empty)")
    p.add_argument("--benchmark", help="whose data DIR holds (default: found by what loads)")
    p.add_argument(
        "--license", help="the card's license id, e.g. cc-by-4.0 (default: benchmark.toml's)"
    )
    p.add_argument("--title", help="the card's title (default: the benchmark's)")
    p.add_argument(
        "--skip-bad",
        action="store_true",
        help="leave out records that cannot be read (listed in the card) instead of stopping",
    )
    p.set_defaults(func=_cmd_export)
