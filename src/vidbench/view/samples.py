"""Per-sample rows of the report's sample browser: one row per sample id, holding what every
run made of it (outcome, raw output, parsed answer, errors, judge attempts, frames, videos).

Outcomes the page filters by are the rows' typed outcomes (scoring/outcome.py), each by its
label: correct, wrong, unparsed (wrong: no option recognised), verdict-unparsed (the judge's
replies never gave a verdict), no-verdict (the judge's call failed or was not made), no-answer
(media, model or data errors), not-graded (scores that are not right or wrong, e.g. a caption's
metrics). With several runs, the samples they disagree on come first.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from vidbench.core.records import Sample
from vidbench.report.schema import SampleRow
from vidbench.scoring.outcome import LABELS
from vidbench.view.collect import RunData

OUTCOMES = LABELS

# (run index, sample) -> the sample's frames / videos as the page describes them
MediaOf = Callable[[int, Sample], dict[str, Any]]


def _group(row: SampleRow, sample: Sample | None, fields: Sequence[str]) -> str:
    """The first of the benchmarks' group fields (Benchmark.sample_groups) the row's groups or
    its sample's metadata hold, e.g. 4D-Bench's subtask or MMWorld's discipline; else the row's
    first group."""
    for name in fields:
        value = row.groups.get(name) or (sample.metadata.get(name) if sample else None)
        if isinstance(value, str) and value:
            return value
    return next(iter(row.groups.values()), "")


def _scores(row: SampleRow, shown: Sequence[str]) -> dict[str, str]:
    """The row's groups (but the `shown` group fields), numbers and own fields (a caption's
    metrics, a judge's verdict, flags), as text."""
    fields: dict[str, object] = {**row.groups, **row.metrics, **row.details}
    return {k: _text(v) for k, v in fields.items() if v is not None and k not in shown}


def _text(value: object) -> str:
    return json.dumps(value) if isinstance(value, dict | list) else str(value)


def _judge(run: RunData, sample_id: str) -> list[dict[str, Any]]:
    attempts = [
        {
            "item": j.item,
            "judge": j.model,
            "version": j.prompt_version,
            "attempt": j.attempt + 1,
            "prompt": j.prompt,
            "reply": j.reply,
        }
        for j in run.judgments.get(sample_id, [])
    ]
    failed = [
        {"item": f.sample_id, "error": f"{f.status}: {f.error}"}
        for f in run.judge_failures.get(sample_id, [])
    ]
    return attempts + failed


def run_entry(
    run: RunData, index: int, row: SampleRow, media: MediaOf, groups: Sequence[str] = ()
) -> dict[str, Any]:
    sample = run.samples.get(row.id)
    entry: dict[str, Any] = {
        "outcome": row.outcome.label,
        "status": row.status,
        "output": row.raw_output,
        "parsed": row.parsed,
        "error": row.error or row.status_detail,
        "verdict_reply": row.judge_reply,
        "scores": _scores(row, groups),
        "judge": _judge(run, row.id),
        "prompt": run.prompts.get(str(row.prompt_hash), []),
    }
    if sample is not None:
        entry.update(media(index, sample))
    elif row.status != "data":
        entry["media_error"] = "the sample's data is not available (see the messages above)"
    return entry


def sample_rows(
    runs: Sequence[RunData], media: MediaOf, groups: Sequence[str] = ()
) -> list[dict[str, Any]]:
    """One row per sample id over all runs (in the first run's order, then new ids), each with
    one entry per run (None where a run has no such sample), grouped by the first of `groups`
    each holds; disagreements first."""
    order: list[str] = []
    by_run: list[dict[str, SampleRow]] = []
    for run in runs:
        records = {row.id: row for row in run.records}
        order.extend(records)
        by_run.append(records)
    rows = []
    for sample_id in dict.fromkeys(order):
        sample = next((r.samples[sample_id] for r in runs if sample_id in r.samples), None)
        entries = [
            run_entry(run, i, records[sample_id], media, groups) if sample_id in records else None
            for i, (run, records) in enumerate(zip(runs, by_run, strict=True))
        ]
        first = next(records[sample_id] for records in by_run if sample_id in records)
        rows.append(
            {
                "id": sample_id,
                "group": _group(first, sample, groups),
                "question": sample.question if sample else None,
                "options": list(sample.options) if sample else [],
                "gold": sample.answer if sample else first.gold,
                "references": list(sample.references) if sample else [],
                "rules": sample.rules if sample else None,
                "runs": entries,
                "disagree": len(runs) > 1 and disagree(entries),
            }
        )
    rows.sort(key=lambda row: not row["disagree"])  # stable: the runs' own order otherwise
    return rows


def disagree(entries: Sequence[dict[str, Any] | None]) -> bool:
    """The runs that have the sample differ in outcome or parsed answer (a sample only one
    run has, e.g. of another task, is no disagreement)."""
    seen = {(e["outcome"], e["parsed"]) for e in entries if e is not None}
    return len(seen) > 1
