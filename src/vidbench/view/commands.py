"""`vidbench view`: the HTML report of finished runs (build.py), served on 127.0.0.1 with
--serve (serve.py). A stored run's task comes from the registry (vidbench/registry.py), so the
report shows questions and frames without knowing a benchmark; the registered benchmarks'
figures and sample groups come from there too."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from rich.markup import escape

from vidbench import cli_types as types
from vidbench.console import err, out
from vidbench.core.errors import ConfigError
from vidbench.registry import parts, sample_groups
from vidbench.report.figures import FigureSpec
from vidbench.view.videos import VIDEO_MODES


def _cmd_view(args: argparse.Namespace) -> int:
    from vidbench.report.results_dir import run_folders
    from vidbench.view.build import ViewOptions, is_report, write_report
    from vidbench.view.collect import collect_runs
    from vidbench.view.serve import bind, serve

    folder = Path(args.out)
    if not args.results and not args.serve:
        raise ConfigError("vidbench view: give results directories (or --serve a built report)")
    sock = bind(args.port) if args.serve else None  # a taken port fails before the build
    if args.results:
        missing = [d for d in args.results if not Path(d).exists()]
        if missing:
            raise ConfigError(f"vidbench view: no such results directory: {', '.join(missing)}")
        found, skipped = run_folders([Path(d) for d in args.results])
        run_dirs: list[Path] = []
        for run_dir in found:  # one run given twice (or through a link): shown once
            if any(run_dir.resolve() == kept.resolve() for kept in run_dirs):
                skipped.append(f"{run_dir}: given twice: shown once")
            elif is_report(run_dir):  # `vidbench view runs/* --out runs/report`, run again
                skipped.append(f"{run_dir}: a report of vidbench view, not a run: skipped")
            else:
                run_dirs.append(run_dir)
        runs = collect_runs(run_dirs)
        if not any(run.results or run.records for run in runs):
            notes = "; ".join([*skipped, *(m for run in runs for m in run.messages)])
            raise ConfigError(f"vidbench view: no results to show ({notes})")
        options = ViewOptions(
            folder,
            videos=args.videos,
            thumbnails=not args.no_thumbnails,
            figures=parts(FigureSpec),
            groups=sample_groups(),
            progress=not args.no_progress,
        )
        built = write_report(runs, options)
        for message in skipped + built.messages:
            err.print(f"[yellow]note[/]: {escape(message)}", highlight=False)
        made, there = built.strips_made, built.strips_reused
        shown = f"; thumbnails of {made} frame strips made, {there} already there"
        shown = shown if made or there else ""
        done = f"wrote {built.index} ({built.samples} samples{shown})"
        err.print(done, highlight=False, soft_wrap=True)
    if sock is not None:
        host, port = sock.getsockname()[:2]
        url = f"http://{host}:{port}/"
        out.print(f"serving {folder} on {url} (Ctrl-C stops)", highlight=False, soft_wrap=True)
        sys.stdout.flush()  # the address, at once, also through a pipe
        serve(folder, sock)
    return 0


def write_sweep_report(runs: Sequence[Path], folder: Path) -> Path:
    """What `vidbench sweep` calls when its runs are done (cli.py hands it to the runner's
    commands, below view/): the HTML report of them in a folder; returns its index.html."""
    from vidbench.view.build import ViewOptions, write_report
    from vidbench.view.collect import collect_runs

    options = ViewOptions(folder, figures=parts(FigureSpec), groups=sample_groups())
    return write_report(collect_runs(list(runs)), options).index


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """`view`."""
    p = subparsers.add_parser(
        "view", help="an HTML report (tables, figures, every sample) that opens offline"
    )
    p.add_argument(
        "results",
        nargs="*",
        help="results directories (several: side by side), or a folder of them",
    )
    p.add_argument("--out", required=True, help="the report folder (open its index.html)")
    p.add_argument(
        "--videos", choices=VIDEO_MODES, default="link",
        help="source videos: link (relative symlinks, default), copy, none",
    )  # fmt: skip
    p.add_argument("--no-thumbnails", action="store_true", help="no frame thumbnails")
    p.add_argument("--serve", action="store_true", help="serve the report on 127.0.0.1")
    p.add_argument("--port", type=types.port, help="with --serve (default: a free port)")
    p.set_defaults(func=_cmd_view)
