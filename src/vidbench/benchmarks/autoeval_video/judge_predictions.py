"""`vidbench judge autoeval-video`: judge a predictions file made elsewhere.

A thin wrapper over the run's stages: the predictions go in as the `predictions:FILE` model
(no frame decoded), the rules judge (or the unified prompt) asks through the run's judge stage,
and the score and report stages write OUT/ as any run does (report/results_dir.py):

OUT/
  store.sqlite      the predictions as answers and every judge reply, never requested again
  samples.jsonl     one record per instance (and per bad input): verdict, reason, judge reply,
                    attempts, whether it is counted, or the error that kept it out
  results.json      Overall and the nine dimensions (Table 6 order), n_judged, n_dropped, ...
  table.md, table.csv

What only this command checks is the predictions file against the rules before anything is
asked: a prediction for an ID without a rule (status `unknown-id`), an unreadable line, an
instance without a prediction (`no-prediction`), and empty answers, each named.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import JsonValue
from rich.console import Console
from rich.markup import escape

from vidbench.benchmarks.autoeval_video import loader as autoeval_video
from vidbench.benchmarks.autoeval_video import rules
from vidbench.benchmarks.autoeval_video.calls import JudgePrompt
from vidbench.benchmarks.autoeval_video.inputs import Predictions, read_predictions
from vidbench.benchmarks.autoeval_video.task import DEFAULT_SPEC, AutoEvalVideo
from vidbench.core.requests import GenerationConfig
from vidbench.models.registry import ModelChoice
from vidbench.report.results_dir import ResultsDir
from vidbench.runner.run import Run
from vidbench.runner.run_config import RunConfig
from vidbench.tasks.problems import Problem

# the status of a prediction for an ID that has no rule (it leaves no instance out)
UNKNOWN_ID = "unknown-id"


@dataclass
class JudgeJob:
    rules: Path
    predictions: Path
    out: Path
    judge: ModelChoice
    prompt: JudgePrompt
    name: str | None = None  # the row name in tables (default: the predictions file's name)
    seed: int = 0
    progress: bool = True
    fresh: bool = False  # start over in OUT (a folder holding a run over other data)


def input_problems(job: JudgeJob, predictions: Predictions, known: set[str]) -> list[Problem]:
    """What is wrong with the predictions and prompt inputs, each naming its record."""
    problems = [*predictions.problems, *job.prompt.problems]
    problems += [
        Problem(
            key,
            job.predictions,
            f"ID {key}: prediction for an unknown ID (no such rule in {job.rules})",
            UNKNOWN_ID,
        )
        for key in predictions.answers
        if key not in known
    ]
    return problems


def _warn(console: Console, job: JudgeJob, samples: Sequence[Any], answers: dict[str, str]) -> None:
    """Name the instances without a prediction, and count the empty answers."""
    for sample in samples:
        if sample.id not in answers:
            message = f"ID {sample.id}: no prediction in {job.predictions}"
            console.print(f"[yellow]not judged[/]: {escape(message)}", highlight=False)
    empty = [s.id for s in samples if rules.is_empty(answers.get(s.id, "x"))]
    if empty and job.prompt.protocol.empty == "wrong":
        console.print(f"[yellow]empty answers[/], counted wrong unasked: IDs {', '.join(empty)}")
    elif empty:
        console.print(f"[yellow]{len(empty)} empty answer(s)[/] sent to the judge as they are")


def judge_predictions(job: JudgeJob, console: Console) -> dict[str, JsonValue]:
    """Judge every prediction that has a rule; write OUT/ and return results.json's content."""
    protocol = job.prompt.protocol
    loaded = autoeval_video.load(job.rules)
    predictions = read_predictions(job.predictions)
    known = {s.id for s in loaded.items} | {p.record for p in loaded.problems}
    _warn(console, job, loaded.items, predictions.answers)
    preset = protocol.name.partition("+")[0]  # the task variant; changed settings ride along
    name = "autoeval-video" + (f":{preset}" if preset != rules.DEFAULT_PROTOCOL else "")
    task = AutoEvalVideo(
        name,
        DEFAULT_SPEC,
        GenerationConfig(temperature=0.0, max_tokens=512),
        protocol,
        "autoeval-video",
        job.prompt,
    )
    config = RunConfig(
        task=name,
        data=str(job.rules),
        model=f"predictions:{job.predictions}",
        out=str(job.out),
        seed=job.seed,
        concurrency=job.judge.concurrency,
        model_options={"name": job.name} if job.name else {},
        judge=job.judge.spec,
        judge_options=dict(job.judge.options),
        judge_attempts=protocol.attempts,
        progress=job.progress,
        fresh=job.fresh,
    )
    problems = input_problems(job, predictions, known)
    Run(config, task, console, problems).run(print_to=console)  # holds OUT for the whole time
    return ResultsDir(job.out).read_results().document()
