"""`vidbench sweep`: cli.py calls `register(subparsers, task_of)`; the handler turns its
arguments into a typed Sweep and calls runner/sweep.py."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from rich.console import Console

from vidbench import cli_types as types
from vidbench.core.errors import ConfigError
from vidbench.runner.run_config import RunConfig
from vidbench.runner.sweep import Sweep, TaskOf, load_sweep, run_configs, run_sweep

out = Console()
err = Console(stderr=True)
REPORT_DIR = "report"  # OUT/report/index.html: the sweep's runs side by side


def _names(text: str | None) -> tuple[str, ...]:
    return tuple(n.strip() for n in (text or "").split(",") if n.strip())


def _sweep_of(args: argparse.Namespace) -> Sweep:
    base = RunConfig(
        task="",
        data="",
        model="",
        out="",
        seed=args.seed,
        limit=args.limit,
        concurrency=args.concurrency,
        cache_dir=args.cache_dir,
        progress=not args.no_progress,
        ray=args.ray,
        ray_workers=args.ray_workers,
        ray_rate=args.ray_rate,
    )
    if args.config:
        sweep = load_sweep(Path(args.config), base)
        return replace(sweep, parallel=args.parallel) if args.parallel else sweep
    if not (args.tasks and args.models and args.data and args.out):
        raise ConfigError("vidbench sweep: give --tasks, --models, --data and --out (or --config)")
    return Sweep(
        tasks=_names(args.tasks),
        models=_names(args.models),
        out=args.out,
        data={"*": args.data},
        variants=_names(args.variants),
        base=base,
        parallel=args.parallel or 1,
    )


def register(
    subparsers: argparse._SubParsersAction,
    task_of: TaskOf,
    report: Callable[[Sequence[Path], Path], Path] | None = None,
) -> None:
    """`report(run dirs, folder)` writes the HTML report of a finished sweep (cli.py hands in
    vidbench view's, which sits above the runner)."""
    p = subparsers.add_parser(
        "sweep", help="a grid of tasks x variants x models: one results dir each, one table"
    )
    p.add_argument("--config", help="a sweep file (TOML; see docs/scale-out.md)")
    p.add_argument("--tasks", help="comma-separated task names")
    p.add_argument("--models", help="comma-separated model specs")
    p.add_argument("--variants", help="comma-separated variants, each applied to every task")
    p.add_argument("--data", help="data folder (every task)")
    p.add_argument("--out", help="sweep folder: OUT/<task>/<model>/ and the combined tables")
    p.add_argument("--parallel", type=types.positive, help="runs at once (default 1)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--limit", type=types.positive, help="only the first N samples of each task")
    p.add_argument("--concurrency", type=types.positive, default=16, help="model calls in flight")
    p.add_argument("--cache-dir", help="frame cache (default ~/.cache/vidbench/frames)")
    p.add_argument("--ray", nargs="?", const="local", metavar="ADDRESS", help="as in `run`")
    p.add_argument("--ray-workers", type=types.positive, default=2, help="Ray workers (replicas)")
    p.add_argument(
        "--ray-rate", type=types.number(0.0, low_open=True), help="API calls/s over all Ray workers"
    )

    p.add_argument("--no-report", action="store_true", help="no HTML report in OUT/report")

    def handler(args: argparse.Namespace) -> int:
        sweep = _sweep_of(args)
        run_sweep(sweep, task_of, err, out)
        if report is not None and not args.no_report:
            runs = [Path(config.out) for config in run_configs(sweep)]
            err.print(f"report: {report(runs, Path(sweep.out) / REPORT_DIR)}", highlight=False)
        return 0

    p.set_defaults(func=handler)
