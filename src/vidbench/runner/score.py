"""The `score` stage: stored answers -> per-sample records. Makes no model call."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from vidbench.core.records import Sample
from vidbench.report.schema import SampleRow
from vidbench.runner.store import Store
from vidbench.scoring.model_call import CallResult
from vidbench.scoring.outcome import NO_ANSWER
from vidbench.tasks.base import Task
from vidbench.tasks.problems import Problem

# samples.jsonl keeps at most this many characters of a reply (`raw_output`); a longer one is cut
# there and its record says so in `raw_output_cut`. The store keeps every reply whole, and the
# task scores the whole reply.
RAW_OUTPUT_CAP = 65_536


def score_samples(
    task: Task,
    samples: Sequence[Sample],
    problems: Sequence[Problem],
    store: Store,
    plan: str,
    verdicts: Mapping[str, CallResult] | None = None,
) -> list[SampleRow]:
    """One row per planned sample and per unloadable record.

    A scored row holds the prompt hash, the frames used, the raw output (at most RAW_OUTPUT_CAP
    characters of it: `raw_output_cut` says where the rest is) and the task's score fields, with
    the `outcome` the task set; a sample without an answer (or a record that could not be
    loaded) holds `error`, a `status` saying why (data: bad record; media, error, empty,
    refused, blocked, missing) and the outcome `no-answer`.
    """
    responses = store.responses(plan)
    failures = store.last_failures(plan)
    answered = [(s, responses[s.id].text) for s in samples if s.id in responses]
    items = [(s, text, _of_sample(task, s, text, verdicts)) for s, text in answered]
    fields = iter(task.score_all(items))
    records: list[dict[str, Any]] = []
    for sample in samples:
        stored = responses.get(sample.id)
        if stored is None:
            status, error = failures.get(
                sample.id, ("missing", f"{sample.id}: no answer yet (run the infer stage)")
            )
            no_answer = {"id": sample.id, "status": status, "error": error, "outcome": NO_ANSWER}
            records.append(no_answer)
            continue
        records.append(
            {
                "id": sample.id,
                "prompt_hash": stored.prompt_hash,
                "frames": stored.request.get("frames", []),
                **_raw_output(stored.text, stored.key),
                "status": "ok",
                "error": None,
                **next(fields),  # a task may mark an answer it cannot score (status, error)
            }
        )
    records.extend(
        {"id": p.record, "status": p.status, "error": str(p), "outcome": NO_ANSWER}
        for p in problems
    )
    return [SampleRow.of(record) for record in records]


def _raw_output(text: str, key: str) -> dict[str, str]:
    """The reply as samples.jsonl keeps it: whole, or cut to RAW_OUTPUT_CAP with a note."""
    if len(text) <= RAW_OUTPUT_CAP:
        return {"raw_output": text}
    return {
        "raw_output": text[:RAW_OUTPUT_CAP],
        "raw_output_cut": (
            f"the first {RAW_OUTPUT_CAP:,} of {len(text):,} characters; the whole reply is in "
            f"store.sqlite (table responses, key {key})"
        ),
    }


def _of_sample(
    task: Task, sample: Sample, reply: str, verdicts: Mapping[str, CallResult] | None
) -> dict[str, CallResult]:
    """This sample's verdicts (`missing` for calls nobody judged), or none at all when the run
    has no judge (a task whose judge columns are optional then leaves them empty)."""
    if verdicts is None:
        return {}
    return {
        call.item: verdicts.get(call.item, CallResult(call.item, "missing"))
        for call in task.judge_calls(sample, reply)
    }
