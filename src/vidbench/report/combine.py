"""`vidbench report`: several runs side by side, as in the paper's tables; runs of different
tasks or data get a table each (their columns and samples are not the same)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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
from vidbench.report.tables import data_of, print_table, unscored_note


def load_results(path: Path) -> Results:
    """A results directory's results, or a results.json file given by its path."""
    if not path.exists():
        raise ConfigError(f"{path}: no such results directory or results.json file")
    if path.is_dir():
        return ResultsDir(path).read_results()
    return read_results_file(path)


def load_all(paths: Sequence[Path], stale: Mapping[Path, str]) -> list[Results]:
    """The results of `paths` (`load_results`), those in `stale` (a path as given: why its
    results no longer hold) marked so (`Results.marked_stale`)."""
    results = [(load_results(path), path) for path in paths]
    return [r.marked_stale(stale[path]) if path in stale else r for r, path in results]


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


def combine(
    paths: Sequence[Path],
    out_dir: Path | None,
    console: Console,
    stale: Mapping[Path, str] | None = None,
) -> list[Results]:
    """Print the runs' tables (one per task and data) and write them to `out_dir` (a folder
    per task and data when there are several); the runs' results, in their order, those in
    `stale` marked so (`load_all`)."""
    if out_dir is not None:
        _check_out(out_dir, paths)
        make_folder(out_dir)
    results = load_all(paths, stale or {})
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
    """Name the runs among `results` (read from `paths`) that are incomplete or stale (their
    data changed since they were scored: `Results.stale`), whose rows the tables and figures
    mark so; EXIT_INCOMPLETE when any is, else EXIT_OK."""
    runs = list(zip(results, paths, strict=True))
    gaps = [f"{path}: {unscored_note(r)}" for r, path in runs if r.errors]
    stale = [f"{path}: {r.stale}" for r, path in runs if r.stale]
    if gaps:
        console.print(
            f"[yellow]{len(gaps)} of {len(results)} run(s) incomplete[/] (exit code "
            f"{EXIT_INCOMPLETE}): their columns are over the samples scored only, and their rows "
            "say so; finish them with the same `vidbench run` command\n"
            + "\n".join(escape(gap) for gap in gaps),
            highlight=False,
        )
    if stale:
        console.print(
            f"[yellow]{len(stale)} of {len(results)} run(s) stale[/] (exit code "
            f"{EXIT_INCOMPLETE}): their results are of rows as they were when scored, and their "
            "rows say so\n" + "\n".join(escape(note) for note in stale),
            highlight=False,
        )
    return EXIT_INCOMPLETE if gaps or stale else EXIT_OK
