"""`vidbench demo`: a synthetic 4D dataset and the built-in baselines, end to end."""

from __future__ import annotations

from pathlib import Path

from rich.console import Console

from vidbench import console as consoles
from vidbench.benchmarks.fourd import loader as fourd_bench
from vidbench.console import counted
from vidbench.report.combine import combine
from vidbench.runner.run import Run
from vidbench.runner.run_config import RunConfig
from vidbench.view.build import ViewOptions, write_report
from vidbench.view.collect import collect_runs

BASELINES = ("random", "constant:A")


def run_demo(
    out: Path, objects: int = 200, show_progress: bool = True, console: Console = consoles.out
) -> None:
    data = out / "data"
    if not (
        data / fourd_bench.RELEASE_FOLDERS[fourd_bench.QA_FILE] / fourd_bench.QA_FILE
    ).is_file():
        from vidbench.benchmarks.fourd.synthetic import generate

        console.print(f"generating a demo dataset of {counted(objects, 'object')} in {data} ...")
        generate(data, objects=objects, seed=0, progress=show_progress)
    results_dirs = []
    for model in BASELINES:
        results_dir = out / "results" / model.replace(":", "-")
        config = RunConfig(
            task="4dbench-qa",
            data=str(data),
            model=model,
            out=str(results_dir),
            cache_dir=str(out / "frame-cache"),
            progress=show_progress,
        )
        Run(config).run()
        results_dirs.append(results_dir)
    combine(results_dirs, out / "results", console)
    console.print(f"results: {out / 'results'} (results.json, samples.jsonl, table.md per model)")
    report = write_report(collect_runs(results_dirs), ViewOptions(out / "report"))
    console.print(f"report: {report.index} (open it in a browser)", soft_wrap=True)
