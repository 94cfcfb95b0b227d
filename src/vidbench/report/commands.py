"""`vidbench report` and `vidbench figures`: tables and figures of finished runs (the HTML
report, `vidbench view`, is vidbench/view/). Each handler parses its arguments and calls the
library (combine.py, figures.py)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

from rich.markup import escape

from vidbench.console import err, out
from vidbench.core.errors import EXIT_INCOMPLETE, EXIT_OK

INCOMPLETE_EXIT = (
    f"Exit code {EXIT_OK}: every run complete; {EXIT_INCOMPLETE}: a run is incomplete (its row "
    "or bar is marked `incomplete: N of M not scored`, never shown as the best), or its data "
    "changed since it was scored (marked `stale`; the data's rows are read to tell, no video)."
)

# the results directories among those given whose data changed since their score stage, with
# why (runner/data_identity.changed_since_scored, which cli.py hands to `register`)
StaleCheck = Callable[[Sequence[Path]], Mapping[Path, str]]


def _given(results: list[str]) -> list[Path]:
    """The results the command is given: a results directory, a results.json (by any name),
    or a folder of runs (a sweep's output, the demo's results/), standing for the runs in it
    (report/results_dir.run_folders)."""
    from vidbench.report.results_dir import RESULTS_FILE, run_folders

    paths: list[Path] = []
    for path in map(Path, results):
        if path.is_dir() and not (path / RESULTS_FILE).is_file():
            paths += run_folders([path], marks=(RESULTS_FILE,))[0]
        else:
            paths.append(path)
    once: dict[Path, Path] = {}  # a run given twice (a folder of runs and one of them) is one row
    for path in paths:
        results_file = (path / RESULTS_FILE if path.is_dir() else path).resolve()
        if results_file in once:
            err.print(f"{escape(str(path))}: given twice, shown once", highlight=False)
        once.setdefault(results_file, path)
    return list(once.values())


def _stale(paths: Sequence[Path], check: StaleCheck) -> dict[Path, str]:
    """The paths given whose run's data changed since it was scored, with why: a results
    directory, or a results.json in one (a results.json by another name may be a copy
    anywhere: not checked)."""
    from vidbench.report.results_dir import RESULTS_FILE

    folders = {
        path: path if path.is_dir() else path.parent
        for path in paths
        if path.is_dir() or path.name == RESULTS_FILE
    }
    changed = check(list(folders.values()))
    return {path: changed[folder] for path, folder in folders.items() if folder in changed}


def _cmd_report(args: argparse.Namespace, check: StaleCheck) -> int:
    from vidbench.report.combine import combine, say_incomplete

    paths = _given(args.results)
    stale = _stale(paths, check)
    results = combine(paths, Path(args.out) if args.out else None, out, stale)
    return say_incomplete(results, paths, err)


def _cmd_figures(args: argparse.Namespace, check: StaleCheck) -> int:
    from vidbench.core.files import make_folder
    from vidbench.registry import parts
    from vidbench.report.combine import load_all, say_incomplete
    from vidbench.report.figures import FigureSpec, all_figures

    paths = _given(args.results)
    make_folder(Path(args.out))
    results = load_all(paths, _stale(paths, check))
    runs = [path if path.is_dir() else path.parent for path in paths]
    written = all_figures(results, Path(args.out), parts(FigureSpec), args.column, runs)
    err.print("wrote " + ", ".join(escape(str(p)) for p in written), highlight=False)
    return say_incomplete(results, paths, err)


def register(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser], check: StaleCheck
) -> None:
    """`report` and `figures` (with the registered benchmarks' own figures); `check`: which
    runs' data changed since they were scored (runner/, above report/)."""
    p = subparsers.add_parser(
        "report",
        help="one table from several results directories",
        description="One paper-style table from several results directories. " + INCOMPLETE_EXIT,
    )
    p.add_argument(
        "results", nargs="+", help="results directories, results.json files or folders of runs"
    )
    p.add_argument("--out", help="write table.md, table.csv and table.tex here")
    p.set_defaults(func=lambda args: _cmd_report(args, check))

    p = subparsers.add_parser(
        "figures",
        help="bar figures per table part, curves for views/frames sweeps",
        description="Bar figures per part of the table, curves for views/frames sweeps. "
        + INCOMPLETE_EXIT,
    )
    p.add_argument(
        "results", nargs="+", help="results directories, results.json files or folders of runs"
    )
    p.add_argument("--out", required=True, help="folder for the PNG and SVG files")
    p.add_argument("--column", help="the column a views/frames sweep plots (default: Overall)")
    p.set_defaults(func=lambda args: _cmd_figures(args, check))
