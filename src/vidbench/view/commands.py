"""`vidbench view`: the HTML report of finished runs (build.py), served on 127.0.0.1 with
--serve (serve.py). cli.py calls `register(subparsers, task_of)`: `task_of` builds a stored
run's task, so the report shows questions and frames without knowing a benchmark."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rich.markup import escape

from vidbench import cli_types as types
from vidbench.console import err, out
from vidbench.core.errors import ConfigError
from vidbench.report.figures import FigureSpec
from vidbench.view.videos import VIDEO_MODES


def _cmd_view(args: argparse.Namespace) -> int:
    from vidbench.view.build import ViewOptions, write_report
    from vidbench.view.collect import collect_runs, run_folders
    from vidbench.view.serve import bind, serve

    folder = Path(args.out)
    if not args.results and not args.serve:
        raise ConfigError("vidbench view: give results directories (or --serve a built report)")
    sock = bind(args.port) if args.serve else None  # a taken port fails before the build
    if args.results:
        missing = [d for d in args.results if not Path(d).exists()]
        if missing:
            raise ConfigError(f"vidbench view: no such results directory: {', '.join(missing)}")
        folders, skipped = run_folders([Path(d) for d in args.results])
        runs = collect_runs(folders, args.task_of)
        if not any(run.results or run.records for run in runs):
            notes = "; ".join([*skipped, *(m for run in runs for m in run.messages)])
            raise ConfigError(f"vidbench view: no results to show ({notes})")
        options = ViewOptions(
            folder,
            videos=args.videos,
            thumbnails=not args.no_thumbnails,
            figures=args.figure_specs,
            groups=args.group_fields,
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


def reporter(
    task_of: Callable[[Any], Any] | None,
    figures: Sequence[FigureSpec] = (),
    groups: Sequence[str] = (),
) -> Callable[[Sequence[Path], Path], Path]:
    """What `vidbench sweep` calls when its runs are done: the HTML report of them in a folder
    (returns its index.html)."""
    from vidbench.view.build import ViewOptions, write_report
    from vidbench.view.collect import collect_runs

    def write(runs: Sequence[Path], folder: Path) -> Path:
        options = ViewOptions(folder, figures=figures, groups=groups)
        return write_report(collect_runs(list(runs), task_of), options).index

    return write


def register(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
    task_of: Callable[[Any], Any] | None = None,
    figures: Sequence[FigureSpec] = (),
    groups: Sequence[str] = (),
) -> None:
    """`view`; `task_of` builds a stored run's task, `figures` are the benchmarks' own figure
    specs, `groups` the record fields samples are grouped by (cli.py hands them in from the
    registered benchmarks)."""
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
    p.set_defaults(
        func=_cmd_view, task_of=task_of, figure_specs=tuple(figures), group_fields=tuple(groups)
    )
