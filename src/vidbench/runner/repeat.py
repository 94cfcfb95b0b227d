"""`vidbench run ... --runs N`: the same evaluation N times with different seeds, then mean ± std.

OUT/run-1 .. OUT/run-N are ordinary results directories (each its own store, so each run asks the
model afresh; re-running the command resumes every one of them). Run i (from 0) uses seed
`--seed + i` (the model's seed, e.g. random-choice's) and, when `--gen-seed` is given,
generation seed `--gen-seed + i`. OUT/results.json holds the means as `columns`, the spreads as
`std` (report/runs.py) and each run's numbers; OUT/table.md and table.csv show mean ± std.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

from rich.console import Console

from vidbench.core.errors import ConfigError
from vidbench.report.results_dir import RUN_FILE, ResultsDir
from vidbench.report.runs import aggregate
from vidbench.report.tables import print_table
from vidbench.runner.lock import results_lock
from vidbench.runner.run import Run, RunOutcome
from vidbench.runner.run_config import RunConfig
from vidbench.runner.store import Store


def run_dir(out: Path, i: int) -> Path:
    return Path(out) / f"run-{i + 1}"


def check_layout(out: Path, runs: int) -> None:
    """ConfigError when OUT holds the other kind of results folder: a single run's (its run.json
    and store) for `--runs N`, or a `--runs N` command's runs (run-1, ...) for a single run. The
    two would mix: the single run's samples beside the runs' mean in results.json."""
    single = any((Path(out) / name).is_file() for name in (RUN_FILE, Store.FILENAME))
    if runs > 1 and single:
        raise ConfigError(
            f"{out} holds a single run ({RUN_FILE}, {Store.FILENAME}): --runs {runs} would write "
            "its runs beside it and replace its results.json with their mean; give another --out"
        )
    if runs == 1 and (run_dir(out, 0) / RUN_FILE).is_file():
        raise ConfigError(
            f"{out} holds the runs of a --runs N command ({run_dir(out, 0).name}, ...): a single "
            "run there would mix its files with their mean; give --runs N, or another --out"
        )


def repeated_configs(config: RunConfig, runs: int) -> list[RunConfig]:
    if runs < 2:
        raise ConfigError(f"--runs {runs}: give 2 or more runs (one run needs no --runs)")
    configs = []
    for i in range(runs):
        generation = dict(config.generation)
        seed = generation.get("seed")
        if isinstance(seed, int):
            generation["seed"] = seed + i
        configs.append(
            dataclasses.replace(
                config,
                seed=config.seed + i,
                out=str(run_dir(Path(config.out), i)),
                generation=generation,
            )
        )
    return configs


def run_repeated(
    runs: list[Run],
    out: Path,
    stages: tuple[str, ...],
    print_to: Console | None = None,
) -> list[RunOutcome]:
    """Every run through `stages` (what each left undone); with `report`, the mean ± std
    results in `out`."""
    configs = [run.config for run in runs]
    outcomes = []
    # OUT too is held (each run holds its own folder): a second command on OUT, a single run
    # or another --runs, would write its mean or its files there meanwhile
    with results_lock(out, f"vidbench run --runs {len(runs)} {runs[0].config.task}"):
        for i, run in enumerate(runs):
            config = run.config
            run.console.print(
                f"[bold]run {i + 1}/{len(runs)}[/] (seed {config.seed}) -> {config.out}"
            )
            outcomes.append(run.run(stages))
        if "report" in stages:
            _combine(configs, out, runs[0].task.title, print_to)
    return outcomes


def _combine(
    configs: list[RunConfig], out: Path, title: str | None, print_to: Console | None
) -> None:
    results = [ResultsDir(Path(c.out)).read_results() for c in configs]
    combined = aggregate(results, [c.out for c in configs])
    ResultsDir(out).write_results(combined)
    if print_to is not None:
        heading = f"{title or combined.task} — mean ± std over {len(configs)} runs"
        print_table([combined], heading, print_to)
