"""`vidbench predictions RESULTS --out FILE` (predictions.py): a declared benchmark's run as the
model's answers, for the benchmark's own submission server."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.markup import escape

from vidbench.cli_options import CommandGroups
from vidbench.console import err
from vidbench.core.errors import ConfigError


def _cmd_predictions(args: argparse.Namespace) -> int:
    from vidbench.benchmarks.custom.declared import resolve_declared
    from vidbench.benchmarks.custom.names import is_declared
    from vidbench.benchmarks.custom.predictions import write_predictions
    from vidbench.runner.run_config import RunConfig
    from vidbench.tasks.registry import build_task

    results = Path(args.results)
    config = RunConfig.load(results)
    if not is_declared(config.task):
        raise ConfigError(
            f"{results} is a run of {config.task}: `vidbench predictions` writes a declared "
            "benchmark's answers in its own file's format (custom:DIR)"
        )
    declared = resolve_declared(config.task)
    task = build_task(declared.benchmark.tasks, declared.task)
    written = write_predictions(task, config.data, results, Path(args.out), args.format)
    kind = {"index": "indexes", "letter": "letters", "text": "texts"}[written.answer_format]
    err.print(
        f"wrote {written.rows} answers ({kind}) to {escape(str(written.path))}",
        highlight=False,
    )
    if written.empty:
        shown = ", ".join(written.empty[:5]) + (", ..." if len(written.empty) > 5 else "")
        err.print(
            f"[yellow]{len(written.empty)} left empty[/]: no answer from the model, or none read "
            f"from its reply ({escape(shown)}); see {escape(str(results))}/samples.jsonl",
            highlight=False,
        )
    if written.unloaded:
        err.print(
            f"[yellow]{written.unloaded} row(s) not loaded[/] (bad rows: vidbench validate "
            f"custom DIR lists them): not in {escape(str(written.path))}",
            highlight=False,
        )
    return 0


def register(groups: CommandGroups) -> None:
    p = groups.top.add_parser(
        "predictions",
        help="a declared benchmark's run as answers for its submission server",
        description="Write the model's answers of the run in RESULTS keyed by each row's id, "
        "in the format the benchmark's file writes its answers (an index, a letter or the "
        "option's text; open-ended: the reply): a JSON object {id: answer}, or a CSV of the id "
        "and answer columns. See docs/custom-benchmarks.md.",
    )
    p.add_argument("results", metavar="RESULTS", help="the results folder of a custom:DIR run")
    p.add_argument("--out", required=True, metavar="FILE", help="the file to write (.json or .csv)")
    p.add_argument(
        "--format",
        choices=["index", "letter", "text"],
        help="how answers are written (default: as the benchmark's file writes its gold answers)",
    )
    p.set_defaults(func=_cmd_predictions)
