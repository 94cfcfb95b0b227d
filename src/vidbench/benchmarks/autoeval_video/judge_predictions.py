"""`vidbench judge autoeval-video`: judge a predictions file made elsewhere.

OUT/
  store.sqlite      every judge reply (runner/store.py), never requested again
  judgments.jsonl   one record per instance (and per bad input): verdict, reason, judge reply,
                    attempts, whether it is counted, or the error that kept it out
  results.json      Overall and the nine dimensions (Table 6 order), n_judged, n_dropped, ...
  table.md, table.csv
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape

from vidbench.benchmarks.autoeval_video import loader as autoeval_video
from vidbench.benchmarks.autoeval_video import rules
from vidbench.benchmarks.autoeval_video.calls import JudgePrompt
from vidbench.benchmarks.autoeval_video.inputs import read_predictions
from vidbench.benchmarks.autoeval_video.task import DEFAULT_SPEC, AutoEvalVideo
from vidbench.core.errors import ConfigError, DataError
from vidbench.core.records import Sample
from vidbench.core.requests import GenerationConfig
from vidbench.report.results import build_results
from vidbench.report.results_dir import ResultsDir
from vidbench.report.tables import print_table
from vidbench.runner.judging import JudgeModel, ask_judge
from vidbench.runner.store import Store
from vidbench.scoring.judge import JudgeCall, no_verdict_message


@dataclass
class JudgeJob:
    rules: Path
    predictions: Path
    out: Path
    judge: JudgeModel
    prompt: JudgePrompt
    name: str | None = None  # the row name in tables (default: the predictions file's stem)
    seed: int = 0
    progress: bool = True


def _sort_key(record: dict[str, Any]) -> tuple[int, int, str]:
    key = str(record["id"])
    return (0, int(key), "") if key.lstrip("-").isdigit() else (1, 0, key)


def _plan(
    job: JudgeJob, samples: Sequence[Sample], answers: dict[str, str]
) -> tuple[list[dict[str, Any]], list[JudgeCall], dict[str, Sample]]:
    """Records for instances that cannot be judged, and the judge calls for the rest."""
    records: list[dict[str, Any]] = []
    calls: list[JudgeCall] = []
    asked: dict[str, Sample] = {}
    for sample in samples:
        if sample.id not in answers:
            error = f"ID {sample.id}: no prediction in {job.predictions}"
            records.append({"id": sample.id, "status": "no-prediction", "error": error})
            continue
        answer = answers[sample.id]
        if rules.is_empty(answer) and job.prompt.protocol.empty == "wrong":
            records.append(_judged(sample, answer, rules.empty_outcome()))
            continue
        try:
            calls.append(job.prompt.call(sample.id, sample, answer))
        except (DataError, ConfigError) as e:
            records.append({"id": sample.id, "status": "data", "error": str(e)})
            continue
        asked[sample.id] = sample
    return records, calls, asked


def _warn(console: Console, records: list[dict[str, Any]], asked: list[str]) -> None:
    """Name every instance left out, and count the empty answers."""
    for record in records:
        if record.get("error"):
            console.print(f"[yellow]not judged[/]: {escape(record['error'])}", highlight=False)
    unasked = [r["id"] for r in records if r.get("empty_answer")]
    if unasked:
        console.print(f"[yellow]empty answers[/], counted wrong unasked: IDs {', '.join(unasked)}")
    sent = sum(1 for answer in asked if rules.is_empty(answer))
    if sent:
        console.print(f"[yellow]{sent} empty answer(s)[/] sent to the judge as they are")


def _judged(sample: Sample, answer: str, fields: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": sample.id,
        "status": "ok",
        "error": None,
        "dimension": sample.metadata["dimension"],
        "prediction": answer,
        "empty_answer": rules.is_empty(answer),
        **fields,
    }


def judge_predictions(job: JudgeJob, console: Console) -> dict[str, Any]:
    """Judge every prediction that has a rule; write OUT/ and return results.json's content."""
    loaded = autoeval_video.load(job.rules)
    predictions = read_predictions(job.predictions)
    answers = predictions.answers
    known = {s.id for s in loaded.items}
    bad_rules = {p.record for p in loaded.problems}
    records: list[dict[str, Any]] = []
    for problem in [*loaded.problems, *predictions.problems, *job.prompt.problems]:
        records.append({"id": problem.record, "status": "data", "error": str(problem)})
    for key in answers:
        if key not in known and key not in bad_rules:
            error = f"ID {key}: prediction for an unknown ID (no such rule in {job.rules})"
            records.append({"id": key, "status": "unknown-id", "error": error})
    planned, calls, asked = _plan(job, loaded.items, answers)
    records += planned
    _warn(console, records, [answers[key] for key in asked])
    store = Store(job.out)
    try:
        verdicts, identity = ask_judge(
            job.judge, calls, store, job.prompt.protocol.attempts, job.progress, console
        )
        usage = store.judge_usage(job.judge.spec)
    finally:
        store.close()
    for call in calls:
        sample = asked[call.item]
        fields = rules.outcome(verdicts[call.item], job.prompt.protocol)
        records.append(_judged(sample, answers[sample.id], fields))
    records.sort(key=_sort_key)
    results = _results(job, records, identity, usage)
    _write(job.out, records, results)
    print_table([results], f"autoeval-video — {job.predictions}", console)
    if results.get("unjudged"):
        console.print(f"[red]{no_verdict_message(results['unjudged'])}[/]")
    return results


def _results(
    job: JudgeJob, records: list[dict[str, Any]], identity: dict[str, Any], usage: dict[str, int]
) -> dict[str, Any]:
    protocol = job.prompt.protocol
    task = AutoEvalVideo("autoeval-video", DEFAULT_SPEC, GenerationConfig(), protocol)
    name = job.name or job.predictions.stem
    return build_results(
        task,
        {"spec": name, "predictions": str(job.predictions)},
        records,
        extra={
            "frame_spec": None,  # the predictions were made elsewhere
            "generation": None,
            "judge": identity,
            "judge_prompt": job.prompt.kind,
            "judge_protocol": protocol.as_dict(),
            "rules_file": str(job.rules),
            "predictions_file": str(job.predictions),
            **rules.summary(records),
            "usage": {"judge": usage},
        },
        seed=job.seed,
    )


def _write(out: Path, records: list[dict[str, Any]], results: dict[str, Any]) -> None:
    directory = ResultsDir(out)
    directory.write_records("judgments.jsonl", records)
    directory.write_results(results)
