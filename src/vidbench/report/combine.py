"""`vidbench report`: several runs side by side, as in the paper's tables; runs of different
tasks or data get a table each (their columns and samples are not the same)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from vidbench.core.errors import EXIT_INCOMPLETE, EXIT_OK, ConfigError
from vidbench.core.files import make_folder
from vidbench.report.results_dir import (
    RESULTS_FILE,
    TABLE_FILES,
    ResultsDir,
    read_results_file,
    write_tables,
)
from vidbench.report.schema import Results
from vidbench.report.tables import data_of, incomplete_note, print_table


def load_results(path: Path) -> Results:
    """A results directory's results, or a results.json file given by its path."""
    if not path.exists():
        raise ConfigError(f"{path}: no such results directory or results.json file")
    if path.is_dir():
        return ResultsDir(path).read_results()
    return read_results_file(path)


def group_key(result: Results) -> tuple[str, str]:
    """(task without its variants, data): results with the same key can share a table. The
    data is a full path (a results.json written before it was one: taken from here)."""
    return result.task.partition(":")[0], data_of(result)


def groups(results: Sequence[Results]) -> dict[tuple[str, str], list[Results]]:
    """Results by `group_key`: the ones that can share a table."""
    grouped: dict[tuple[str, str], list[Results]] = {}
    for r in results:
        grouped.setdefault(group_key(r), []).append(r)
    return grouped


def _title(members: Sequence[Results]) -> str | None:
    """The benchmark's own title when its runs carry one (a declared benchmark's), else None."""
    titles = set()
    for r in members:
        benchmark = (r.model_extra or {}).get("benchmark")
        titles.add(benchmark.get("title") if isinstance(benchmark, dict) else None)
    return titles.pop() if len(titles) == 1 else None


def _check_out(out_dir: Path, paths: Sequence[Path]) -> None:
    """ConfigError when `out_dir` is a run's results directory and the tables are not that
    run's alone: they would replace the run's own table.md, .csv and .tex."""
    if not (out_dir / RESULTS_FILE).is_file():
        return
    own = [p for p in paths if (p if p.is_dir() else p.parent).resolve() == out_dir.resolve()]
    if len(paths) > 1 or not own:
        raise ConfigError(
            f"--out {out_dir} is a run's results directory: the table of these runs would "
            f"replace its own {', '.join(TABLE_FILES)}; give another folder"
        )


def combine(paths: Sequence[Path], out_dir: Path | None, console: Console) -> list[Results]:
    """Print the runs' tables (one per task and data) and write them to `out_dir` (a folder
    per task and data when there are several); the runs' results, in their order."""
    if out_dir is not None:
        _check_out(out_dir, paths)
        make_folder(out_dir)
    results = [load_results(p) for p in paths]
    grouped = groups(results)
    for (task, data), members in grouped.items():
        title = _title(members) or task
        print_table(members, f"{title} — {data}" if len(grouped) > 1 else title, console)
    if out_dir is not None:
        if len(grouped) == 1:
            write_tables(out_dir, results)
        else:  # one set of table files per task and data
            for i, members in enumerate(grouped.values(), start=1):
                write_tables(out_dir / f"table-{i}-{members[0].task.partition(':')[0]}", members)
    return results


def say_incomplete(results: Sequence[Results], paths: Sequence[Path], console: Console) -> int:
    """Name the runs among `results` (read from `paths`) that are incomplete, whose rows the
    tables and figures mark so; EXIT_INCOMPLETE when any is, else EXIT_OK."""
    gaps = [
        f"{path}: {note}"
        for r, path in zip(results, paths, strict=True)
        if (note := incomplete_note(r))
    ]
    if not gaps:
        return EXIT_OK
    console.print(
        f"[yellow]{len(gaps)} of {len(results)} run(s) incomplete[/] (exit code "
        f"{EXIT_INCOMPLETE}): their columns are over the samples scored only, and their rows "
        "say so; finish them with the same `vidbench run` command\n"
        + "\n".join(escape(gap) for gap in gaps),
        highlight=False,
    )
    return EXIT_INCOMPLETE
