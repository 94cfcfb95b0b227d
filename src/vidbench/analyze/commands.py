"""`vidbench analyze errors RUN [RUN ...] --judge SPEC` and `vidbench compare RUN_A RUN_B`.

cli.py calls `register(subparsers)` with its top-level subparsers (a stored run's task comes
from the registry: analyses know no benchmark); the handler parses its arguments and calls the
library (errors.py, error_table.py, error_figure.py).
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from rich.markup import escape

from vidbench import cli_options as options
from vidbench import cli_types as types
from vidbench.console import err, out
from vidbench.core.errors import EXIT_INCOMPLETE, EXIT_OK, ConfigError
from vidbench.core.files import make_folder, write_atomic
from vidbench.models.registry import ModelChoice, parse_options
from vidbench.report.results_dir import RUN_FILE, run_folders
from vidbench.runner.model_calls import DEFAULT_ATTEMPTS

if TYPE_CHECKING:
    from vidbench.analyze.errors import ErrorSummary

STEM = "error_types"


def _cmd_errors(args: argparse.Namespace) -> int:
    from vidbench.analyze.error_figure import write_figure
    from vidbench.analyze.error_table import failed, print_errors, to_csv, to_markdown
    from vidbench.analyze.errors import read_run, tag_errors

    given = [Path(r) for r in args.runs]
    missing = [str(r) for r in given if not r.is_dir()]
    if missing:
        raise ConfigError(f"analyze errors: no such results directory: {', '.join(missing)}")
    # a folder of runs (a `--runs N` folder, a sweep's output) stands for the runs in it
    runs = run_folders(given, marks=(RUN_FILE,))[0]  # each a folder (above): none skipped
    if args.out is None and len(given) > 1:
        raise ConfigError("analyze errors: give --out DIR for the table of several runs")
    target = Path(args.out) if args.out else given[0]
    if args.out:
        make_folder(target)  # before any judge call: a file in the way is said at once
    judge = ModelChoice(
        args.judge,
        parse_options(args.judge_opt, "--judge-opt"),
        "--judge-opt",
        concurrency=args.concurrency,
    )
    inputs = [read_run(r) for r in runs]  # every run checked before any judge call
    summaries = [
        tag_errors(
            run,
            judge,
            attempts=args.judge_attempts,
            with_frames=args.with_frames,
            show_progress=not args.no_progress,
        )
        for run in inputs
    ]
    print_errors(summaries, out)
    write_atomic(target / f"{STEM}.md", to_markdown(summaries).encode())
    write_atomic(target / f"{STEM}.csv", to_csv(summaries).encode())
    figures = write_figure(summaries, target / STEM)
    written = f"{target / STEM}.md, .csv, " + ", ".join(p.suffix for p in figures)
    err.print(f"wrote {escape(written)}", highlight=False)
    untyped = sum(failed(s) + s["unparsed"] for s in summaries)
    if untyped:
        err.print(
            f"[yellow]{untyped} wrong answer(s) without a type[/] (unparsed or failed; see "
            "errors.jsonl, and missing_samples and changed_samples in errors.json); failed ones "
            "are asked again by the next run"
        )
    for summary in summaries:
        _say_set_apart(summary)
    if any(failed(s) for s in summaries):
        err.print(
            f"incomplete (exit code {EXIT_INCOMPLETE}): wrong answers without a type for want "
            "of a judge reply, their frames or their sample"
        )
        return EXIT_INCOMPLETE
    return EXIT_OK


def _say_set_apart(summary: ErrorSummary) -> None:
    """Name the wrong answers left untyped because their sample is gone from the run's data,
    or is not what the model answered."""
    changed = "changed since (question, options, videos, window or gold)"
    for ids, what in (
        (summary["missing_samples"], "are gone"),
        (summary["changed_samples"], changed),
    ):
        if ids:
            err.print(
                f"{escape(summary['run'])}: {len(ids)} wrong answer(s) not typed: their samples "
                f"in the run's data {what} (the first: {escape(ids[0])}); give the run its data "
                "back, or run it again",
                highlight=False,
            )


def _cmd_compare(args: argparse.Namespace) -> int:
    from vidbench.analyze.compare import compare_runs, print_comparison, write_comparison

    if args.out:
        make_folder(Path(args.out))
    comparison = compare_runs(Path(args.a), Path(args.b), args.resamples, args.seed)
    print_comparison(comparison, out)
    if args.out:
        written = write_comparison(comparison, Path(args.out))
        err.print("wrote " + ", ".join(escape(str(p)) for p in written), highlight=False)
    return 0


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    analyze = subparsers.add_parser("analyze", help="analyses of finished runs")
    kinds = analyze.add_subparsers(dest="analysis", required=True)
    p = kinds.add_parser(
        "errors", help="tag wrong answers with MMWorld's seven error types (any MCQ task)"
    )
    p.add_argument(
        "runs", nargs="+", help="results directories of finished runs, or folders of runs"
    )
    options.add_judge(p, required=True, what="the judge")
    p.add_argument(
        "--judge-attempts",
        type=types.positive,
        default=DEFAULT_ATTEMPTS,
        help=f"asks per unreadable reply (default {DEFAULT_ATTEMPTS})",
    )
    options.add_concurrency(p, what="judge calls")
    p.add_argument(
        "--with-frames", action="store_true", help="show the judge the frames the model saw"
    )
    p.add_argument("--out", help="table and figure folder (default: the run, when one)")
    p.set_defaults(func=_cmd_errors)

    p = subparsers.add_parser(
        "compare", help="B - A per column on the same samples, with paired tests"
    )
    p.add_argument("a", help="results directory of run A")
    p.add_argument("b", help="results directory of run B")
    p.add_argument("--out", help="write compare.md, .csv, .json and .tex here")
    p.add_argument("--resamples", type=types.positive, default=10_000, help="bootstrap resamples")
    p.add_argument("--seed", type=int, default=0, help="seed of the paired bootstrap")
    p.set_defaults(func=_cmd_compare)
