"""Per-sample rows of the report's sample browser: one row per sample id, holding what every
run made of it (outcome, raw output, parsed answer, errors, judge attempts, frames, videos).

Outcomes the page filters by are the rows' typed outcomes (scoring/outcome.py), each by its
label: correct, wrong, unparsed (wrong: no option recognised), verdict-unparsed (the judge's
replies never gave a verdict), no-verdict (the judge's call failed or was not made), no-answer
(media, model or data errors), not-graded (scores that are not right or wrong, e.g. a caption's
metrics), no-gold (answered, but the row has no gold answer), score-failed (answered, but the
task's scorer failed on it). With several runs, the samples they disagree on come first.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NotRequired, TypedDict

from vidbench.core.errors import DataError
from vidbench.core.records import Sample
from vidbench.media.frame import video_sources
from vidbench.report.results_dir import SAMPLES_FILE
from vidbench.report.schema import SampleRow
from vidbench.runner.store import StoredCall
from vidbench.scoring.outcome import LABELS
from vidbench.view.collect import RunData
from vidbench.view.thumbs import Strip
from vidbench.view.videos import PlacedVideo

OUTCOMES = LABELS
VIDEO_CHANGED = (
    "the video was edited in place after this run answered: the frames and video shown are the "
    "video as it is now, not the ones the model saw"
)


class SampleMedia(TypedDict, total=False):
    """A sample's videos and (with thumbnails) frames as the page shows them (none when they
    were not made)."""

    videos: list[PlacedVideo]
    frames: Strip
    sources: dict[int, str]  # each view's video's digest as it is now (FrameCache.video_digest)


# (run index, sample) -> the sample's frames / videos as the page describes them
MediaOf = Callable[[int, Sample], SampleMedia]
# [file, position]: a prompt's text in the report's prompt files, which the page loads when a
# sample's "Prompt" is opened (prompts are most of a run's text, and rarely read)
PromptRef = tuple[int, int]


class JudgeAttempt(TypedDict):
    """One judge call about a sample: its prompt and reply, or its error."""

    item: str
    judge: NotRequired[str]
    version: NotRequired[str]
    attempt: NotRequired[int]
    prompt: NotRequired[str]
    reply: NotRequired[str]
    error: NotRequired[str]


class RunEntry(TypedDict):
    """What one run made of a sample."""

    outcome: str
    status: str
    output: str | None
    truncated: bool  # the reply stopped at its token limit (max_tokens): it may be cut short
    parsed: str | None
    error: str | None
    verdict_reply: str | None
    scores: dict[str, str]
    judge: list[JudgeAttempt]  # the failed judge calls
    judge_calls: list[PromptRef]  # where the judge's calls are (build.py's judge files)
    prompt: PromptRef | None  # where the exact prompt's text is (build.py's prompt files)
    videos: NotRequired[list[PlacedVideo]]
    frames: NotRequired[Strip]
    media_error: NotRequired[str]
    video_changed: NotRequired[str]  # the video the run answered about is not the one there now


class SampleView(TypedDict):
    """A row of the sample browser: a sample and what every run made of it."""

    id: str
    group: str
    question: str | None
    options: list[str]
    gold: str | None
    references: list[str]
    rules: str | None
    runs: list[RunEntry | None]
    disagree: bool


def _group(row: SampleRow, sample: Sample | None, fields: Sequence[str]) -> str:
    """The first of the benchmarks' group fields (Benchmark.sample_groups) the row's groups or
    its sample's metadata hold, e.g. 4D-Bench's subtask or MMWorld's discipline; else the row's
    first group."""
    for name in fields:
        value = row.groups.get(name) or (sample.metadata.get(name) if sample else None)
        value = ", ".join(value) if isinstance(value, list) else value  # counts in each
        if isinstance(value, str) and value:
            return value
    first = next(iter(row.groups.values()), "")
    return ", ".join(first) if isinstance(first, list) else first


def _scores(row: SampleRow, shown: Sequence[str]) -> dict[str, str]:
    """The row's groups (but the `shown` group fields), numbers and own fields (a caption's
    metrics, a judge's verdict, flags), as text."""
    fields: dict[str, object] = {**row.groups, **row.metrics, **row.details}
    return {k: _text(v) for k, v in fields.items() if v is not None and k not in shown}


def _text(value: object) -> str:
    return json.dumps(value) if isinstance(value, dict | list) else str(value)


def judge_attempt(call: StoredCall) -> JudgeAttempt:
    """A stored judge call as the page shows it."""
    return {
        "item": call.item,
        "judge": call.model,
        "version": call.prompt_version,
        "attempt": call.attempt + 1,
        "prompt": call.prompt,
        "reply": call.reply,
    }


def _judge_failures(run: RunData, sample_id: str) -> list[JudgeAttempt]:
    return [
        {"item": f.sample_id, "error": f"{f.status}: {f.error}"}
        for f in run.judge_failures.get(sample_id, [])
    ]


@dataclass(frozen=True)
class Written:
    """Where the texts build.py writes apart from the rows are: the exact prompts by prompt hash,
    and each run's judge calls by sample id."""

    prompts: Mapping[str, PromptRef] = field(default_factory=dict)
    judge_calls: Sequence[Mapping[str, list[PromptRef]]] = ()


def run_entry(
    run: RunData,
    index: int,
    row: SampleRow,
    media: MediaOf,
    groups: Sequence[str] = (),
    written: Written = Written(),
) -> RunEntry:
    sample = run.samples.get(row.id)
    judge_calls = written.judge_calls[index] if index < len(written.judge_calls) else {}
    entry: RunEntry = {
        "outcome": row.outcome.label,
        "status": row.status,
        "output": row.raw_output,
        "truncated": bool(row.truncated),
        "parsed": row.parsed,
        "error": row.error or row.status_detail,
        "verdict_reply": row.judge_reply,
        "scores": _scores(row, groups),
        "judge": _judge_failures(run, row.id),
        "judge_calls": list(judge_calls.get(row.id, [])),
        "prompt": written.prompts.get(str(row.prompt_hash)),
    }
    if sample is not None:
        shown = media(index, sample)
        now = shown.get("sources", {})
        answered = video_sources(row.frames or [])
        if any(view in now and now[view] != digest for view, digest in answered.items()):
            entry["video_changed"] = VIDEO_CHANGED
        if "videos" in shown:
            entry["videos"] = shown["videos"]
        if "frames" in shown:
            entry["frames"] = shown["frames"]
    elif row.status != "data":
        entry["media_error"] = "the sample's data is not available (see the messages above)"
    return entry


# a sample of the report: the runs' data it belongs to (RunData.data_key) and its id; runs of
# other data (another benchmark's "questions-3") never share it
SampleKey = tuple[str, str]


def sample_order(runs: Sequence[RunData]) -> tuple[list[SampleKey], int]:
    """Every sample over all runs (in the first run's order, then new ones), the samples the
    runs disagree on first; and how many those are."""
    keys = dict.fromkeys((run.data_key, sample_id) for run in runs for sample_id in run.index())
    if len(runs) < 2:
        return list(keys), 0
    differ = [
        (data, i)
        for data, i in keys
        if _differ([
            (x.outcome, x.parsed)
            for run in runs
            if run.data_key == data and (x := run.index().get(i)) is not None
        ])
    ]  # fmt: skip
    split = set(differ)
    return differ + [key for key in keys if key not in split], len(differ)


def sample_rows(
    runs: Sequence[RunData],
    keys: Sequence[SampleKey],
    media: MediaOf,
    groups: Sequence[str] = (),
    written: Written = Written(),
) -> list[SampleView]:
    """The rows of the samples `keys` (from `sample_order`), each with one entry per run (None
    where a run has no such sample, or is of other data), grouped by the first of `groups`
    each holds; the runs' rows are read again for just these samples."""
    by_run: list[dict[str, SampleRow]] = []
    for run in runs:
        index = run.index()
        there = [i for data, i in keys if data == run.data_key and i in index]
        read = dict(zip(there, run.rows_at([index[i] for i in there]), strict=True))
        if any(row.id != sample_id for sample_id, row in read.items()):
            raise DataError(f"{run.path}: {SAMPLES_FILE} changed while the report was written")
        by_run.append(read)
    rows: list[SampleView] = []
    for data, sample_id in keys:
        among = [
            (i, run, records.get(sample_id) if run.data_key == data else None)
            for i, (run, records) in enumerate(zip(runs, by_run, strict=True))
        ]
        sample = next(
            (run.samples[sample_id] for _, run, row in among if row and sample_id in run.samples),
            None,
        )
        entries = [
            None if row is None else run_entry(run, i, row, media, groups, written)
            for i, run, row in among
        ]
        first = next(row for _, _, row in among if row is not None)
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
    return rows


def search_text(row: SampleView) -> str:
    """What the page's search looks in: the id, group, question and options, and each run's
    output, parsed answer and error, a line each."""
    parts = [row["id"], row["group"], row["question"], *row["options"]]
    for entry in row["runs"]:
        if entry is not None:
            parts += [entry["output"], entry["parsed"], entry["error"]]
    return "\n".join("" if part is None else part for part in parts)


def _differ(seen: Sequence[tuple[str, str | None]]) -> bool:
    return len(set(seen)) > 1


def disagree(entries: Sequence[RunEntry | None]) -> bool:
    """The runs that have the sample differ in outcome or parsed answer (a sample only one
    run has, e.g. of another task, is no disagreement)."""
    return _differ([(e["outcome"], e["parsed"]) for e in entries if e is not None])
