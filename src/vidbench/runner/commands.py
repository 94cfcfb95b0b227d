"""`vidbench run` and `vidbench sweep`: cli.py calls `register(subparsers, report)`;
each handler turns its arguments into typed values (a RunRequest, a Sweep) and calls the runner
(launch.py, sweep.py). The argparse namespace stops here."""

from __future__ import annotations

import argparse
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import replace
from pathlib import Path

from rich.markup import escape

from vidbench import cli_options as options
from vidbench import cli_types as types
from vidbench.console import counted, err, out
from vidbench.core.errors import EXIT_INCOMPLETE, EXIT_OK, ConfigError
from vidbench.media.spec import frame_overrides
from vidbench.models.registry import parse_options
from vidbench.runner.launch import RunRequest, launch
from vidbench.runner.run import STAGES, RunOutcome
from vidbench.runner.run_config import RunConfig
from vidbench.runner.sweep import Sweep, load_sweep, run_configs, run_sweep

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


def _run_request(args: argparse.Namespace) -> RunRequest:
    model_options = parse_options(args.model_opt)
    if args.api_key_env:
        model_options["api_key_env"] = args.api_key_env
    judge_options = parse_options(args.judge_opt, "--judge-opt")
    frames = frame_overrides(
        args.views, args.frames, args.sampler, args.order, args.timestamps, args.max_side
    )
    chosen = {
        "temperature": args.temperature,
        "top_p": args.top_p,
        "max_tokens": args.max_tokens,
        "seed": args.gen_seed,
    }
    return RunRequest(
        out=args.out,
        task=args.task,
        data=args.data,
        model=args.model,
        stage=args.stage,
        runs=args.runs,
        seed=args.seed,
        limit=args.limit,
        concurrency=args.concurrency,
        cache_dir=args.cache_dir,
        ray=args.ray,
        ray_workers=args.ray_workers,
        ray_rate=args.ray_rate,
        frames=frames,
        generation={k: v for k, v in chosen.items() if v is not None},
        model_options=model_options,
        judge=args.judge,
        judge_options=judge_options,
        progress=not args.no_progress,
        fresh=args.fresh,
    )


def _add_run(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = subparsers.add_parser(
        "run",
        help="evaluate a model on a task",
        description="Evaluate a model on a task: infer, judge, score and report into --out. "
        f"Exit code {EXIT_OK}: complete results; {EXIT_INCOMPLETE}: results written but not "
        "complete (samples without an answer or a verdict; see error_details in results.json).",
    )
    p.add_argument("task", nargs="?", help="e.g. 4dbench-qa, 4dbench-qa:time-first")
    p.add_argument("--data", metavar="DIR", help="data folder or release root")
    p.add_argument("--model", metavar="SPEC", help="model spec, e.g. random, constant:A")
    options.add_out(p, "results directory")
    p.add_argument(
        "--runs",
        type=types.positive,
        default=1,
        metavar="N",
        help="repeat with seeds SEED..SEED+N-1; mean ± std",
    )
    p.add_argument(
        "--stage",
        choices=["all", *STAGES],
        default="all",
        help="run one stage only (judge, score and report of a stored run need only --out)",
    )
    options.add_fresh(p)
    options.add_run_place(p, "only the first N samples")
    options.add_frames(p)
    options.add_generation(p)

    p.set_defaults(func=_cmd_run)


def _cmd_run(args: argparse.Namespace) -> int:
    request = _run_request(args)  # every option parsed and checked here, before any work
    return _exit(launch(request, err, out), args.out)


def _exit(outcome: RunOutcome, where: str) -> int:
    """The exit code of runs that left `outcome` undone, saying what to do when incomplete."""
    if not outcome.complete:
        err.print(
            f"[red]incomplete[/]: the results in {escape(where)} do not cover every "
            f"sample (exit code {EXIT_INCOMPLETE}); {escape(_advice(outcome))}"
        )
    return EXIT_OK if outcome.complete else EXIT_INCOMPLETE


def _advice(outcome: RunOutcome) -> str:
    """What to do about an incomplete run: what a rerun retries, and what must change first."""
    if outcome.not_asked:  # --stage score or report of a run stopped before it finished
        return (
            "some samples were never asked (the run stopped before the end): run its "
            "command again (TASK, --model and --out, no --stage) to ask them"
        )
    if outcome.change_first:
        return "; ".join([*_retried(outcome), rejected_advice(outcome.change_first)])
    if outcome.retry_helps:
        return _retried(outcome)[0]
    if outcome.scorer_failed:
        return (
            "the task's scorer failed on some answers (status score: error_details in "
            "results.json names each, with the task's code); once it is fixed, the same "
            "command again scores them (their answers are stored: no model call)"
        )
    return (
        "error_details in results.json names each sample left out and why (bad rows "
        "and videos: vidbench validate); the same command again does not change them"
    )


def _retried(outcome: RunOutcome) -> list[str]:
    """What running the same command again retries (nothing: no line)."""
    if outcome.retried:
        calls = counted(outcome.retried, "failed call")
        return [f"run the same command again to retry {calls} (timeouts, server errors)"]
    if outcome.retry_helps:
        return ["run the same command again to retry the failed calls"]
    return []


def rejected_advice(change_first: Counter[str]) -> str:
    """The failed calls the API would refuse again, by what must change first."""
    what = ", ".join(f"{what} ({n})" for what, n in change_first.most_common())
    calls = counted(change_first.total(), "call")
    return (
        f"{calls} the API refused would be refused again as they are (change_first in "
        f"error_details of results.json): change first {what}, then run the command again"
    )


def register(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
    report: Callable[[Sequence[Path], Path], Path] | None = None,
) -> None:
    """`run` and `sweep`; `report(run dirs, folder)` writes the HTML report of a finished sweep
    (cli.py hands in vidbench view's, which sits above the runner)."""
    _add_run(subparsers)
    p = subparsers.add_parser(
        "sweep", help="a grid of tasks x variants x models: one results dir each, one table"
    )
    p.add_argument("--config", metavar="FILE", help="a sweep file (TOML; see docs/scale-out.md)")
    p.add_argument("--tasks", help="comma-separated task names")
    p.add_argument("--models", help="comma-separated model specs")
    p.add_argument("--variants", help="comma-separated variants, each applied to every task")
    p.add_argument("--data", metavar="DIR", help="data folder (every task)")
    options.add_out(p, "sweep folder: OUT/<task>/<model>/ and the combined tables", required=False)
    p.add_argument("--parallel", type=types.positive, metavar="N", help="runs at once (default 1)")
    options.add_run_place(p, "only the first N samples of each task")
    p.add_argument("--no-report", action="store_true", help="no HTML report in OUT/report")

    def handler(args: argparse.Namespace) -> int:
        sweep = _sweep_of(args)
        _, outcome = run_sweep(sweep, err, out)
        if report is not None and not args.no_report:
            runs = [Path(config.out) for config in run_configs(sweep)]
            err.print(f"report: {report(runs, Path(sweep.out) / REPORT_DIR)}", highlight=False)
        return _exit(outcome, sweep.out)

    p.set_defaults(func=handler)
