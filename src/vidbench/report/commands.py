"""`vidbench report` and `vidbench figures`: tables and figures of finished runs (the HTML
report, `vidbench view`, is vidbench/view/). Each handler parses its arguments and calls the
library (combine.py, figures.py)."""

from __future__ import annotations

import argparse
from pathlib import Path

from vidbench.console import err, out
from vidbench.core.errors import EXIT_INCOMPLETE, EXIT_OK

INCOMPLETE_EXIT = (
    f"Exit code {EXIT_OK}: every run complete; {EXIT_INCOMPLETE}: a run is incomplete (its row "
    "or bar is marked `incomplete: N of M not scored`, never shown as the best)."
)


def _cmd_report(args: argparse.Namespace) -> int:
    from vidbench.report.combine import combine, say_incomplete

    paths = [Path(d) for d in args.results]
    results = combine(paths, Path(args.out) if args.out else None, out)
    return say_incomplete(results, paths, err)


def _cmd_figures(args: argparse.Namespace) -> int:
    from vidbench.registry import parts
    from vidbench.report.combine import load_results, say_incomplete
    from vidbench.report.figures import FigureSpec, all_figures

    results = [load_results(Path(d)) for d in args.results]
    runs = [Path(d) if Path(d).is_dir() else Path(d).parent for d in args.results]
    written = all_figures(results, Path(args.out), parts(FigureSpec), args.column, runs)
    err.print("wrote " + ", ".join(str(p) for p in written), highlight=False)
    return say_incomplete(results, [Path(d) for d in args.results], err)


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`report` and `figures` (with the registered benchmarks' own figures)."""
    p = subparsers.add_parser(
        "report",
        help="one table from several results directories",
        description="One paper-style table from several results directories. " + INCOMPLETE_EXIT,
    )
    p.add_argument("results", nargs="+", help="results directories (or results.json files)")
    p.add_argument("--out", help="write table.md, table.csv and table.tex here")
    p.set_defaults(func=_cmd_report)

    p = subparsers.add_parser(
        "figures",
        help="bar figures per table part, curves for views/frames sweeps",
        description="Bar figures per part of the table, curves for views/frames sweeps. "
        + INCOMPLETE_EXIT,
    )
    p.add_argument("results", nargs="+", help="results directories (or results.json files)")
    p.add_argument("--out", required=True, help="folder for the PNG and SVG files")
    p.add_argument("--column", help="the column a views/frames sweep plots (default: Overall)")
    p.set_defaults(func=_cmd_figures)
