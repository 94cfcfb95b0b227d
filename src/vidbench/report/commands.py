"""`vidbench report` and `vidbench figures`: tables and figures of finished runs (the HTML
report, `vidbench view`, is vidbench/view/). Each handler parses its arguments and calls the
library (combine.py, figures.py)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from pathlib import Path

from rich.console import Console

out = Console()
err = Console(stderr=True)
# A benchmark's own figures: (results directories, output folder) -> the files written, none for
# runs that are not its kind. cli.py hands in the benchmarks' (benchmarks/registry.py FIGURES).
FigureMaker = Callable[[Sequence[Path], Path], list[Path]]


def _cmd_report(args: argparse.Namespace) -> int:
    from vidbench.report.combine import combine

    combine([Path(d) for d in args.results], Path(args.out) if args.out else None, out)
    return 0


def _cmd_figures(args: argparse.Namespace) -> int:
    from vidbench.report.combine import load_results
    from vidbench.report.figures import bar_figures, curve_figure

    results = [load_results(Path(d)) for d in args.results]
    folder = Path(args.out)
    written = bar_figures(results, folder) + curve_figure(results, folder, args.column)
    for make in args.figure_makers:
        written += make([Path(d) for d in args.results], folder)
    err.print("wrote " + ", ".join(str(p) for p in written), highlight=False)
    return 0


def register(
    subparsers: argparse._SubParsersAction, figure_makers: Sequence[FigureMaker] = ()
) -> None:
    p = subparsers.add_parser("report", help="one table from several results directories")
    p.add_argument("results", nargs="+", help="results directories (or results.json files)")
    p.add_argument("--out", help="write table.md, table.csv and table.tex here")
    p.set_defaults(func=_cmd_report)

    p = subparsers.add_parser(
        "figures", help="bar figures per table part, curves for views/frames sweeps"
    )
    p.add_argument("results", nargs="+", help="results directories (or results.json files)")
    p.add_argument("--out", required=True, help="folder for the PNG and SVG files")
    p.add_argument("--column", help="the column a views/frames sweep plots (default: Overall)")
    p.set_defaults(func=_cmd_figures, figure_makers=tuple(figure_makers))
