"""The `score` stage: stored answers -> per-sample records. Makes no model call."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence

from vidbench.core.errors import ConfigError, VidbenchError, code_of
from vidbench.core.records import Sample, batched
from vidbench.report.schema import AnsweredFields, SampleRow
from vidbench.runner.store import MAX_IDS, FailedCall, Store
from vidbench.scoring.model_call import CallResult, ModelCall
from vidbench.scoring.outcome import SampleScore
from vidbench.tasks.base import Task, code_failed
from vidbench.tasks.problems import Problem

# samples.jsonl keeps at most this many characters of a reply (`raw_output`); a longer one is cut
# there and its record says so in `raw_output_cut`. The store keeps every reply whole, and the
# task scores the whole reply.
RAW_OUTPUT_CAP = 65_536


# Samples scored at a time: their answers are read from the store, scored and handed on (to be
# written) before the next batch, so scoring holds one batch, whatever the number of samples.
SCORE_BATCH = MAX_IDS

# The stored verdicts of some judge calls, by item (runner/run.py: the judge's, read from the
# store without asking); a batch's calls are looked up at a time.
StoredVerdicts = Callable[[Sequence[ModelCall[object]]], Mapping[str, CallResult[object]]]
Verdicts = Mapping[str, CallResult[object]]  # a sample's, by call item


def scores_whole_set(task: Task) -> bool:
    """Whether the task scores every answer at once (its own `score_all`: corpus statistics, a
    batched metric model) rather than one by one."""
    return type(task).score_all is not Task.score_all


def scored_rows(
    task: Task,
    samples: Iterable[Sample],
    problems: Sequence[Problem],
    store: Store,
    plan: str,
    verdicts: StoredVerdicts | None = None,
) -> Iterator[SampleRow]:
    """One row per planned sample (in the samples' order), then one per unloadable record,
    scored SCORE_BATCH samples at a time (all at once for a task that `scores_whole_set`).

    A scored row holds the prompt hash, the frames used, the raw output (at most RAW_OUTPUT_CAP
    characters of it: `raw_output_cut` says where the rest is; `truncated` that the model
    stopped at its token limit) and the task's `SampleScore`; a
    sample without an answer (or a record that could not be loaded) holds `error`, a `status`
    saying why (data: bad record; media, error, empty, refused, blocked, missing) and the
    outcome `no-answer`. An answer the task's scorer fails on (it raises, or returns anything
    but a SampleScore) keeps its answer in a row of status `score`, outcome `score-failed`,
    whose error names the sample, the task, its code and what went wrong; the other samples
    are scored. A ConfigError from the scorer (a metric it cannot run) stops the stage.
    """
    if scores_whole_set(task):
        yield from _scored_batch(task, list(samples), store, plan, verdicts, whole_set=True)
    else:
        for batch in batched(samples, SCORE_BATCH):
            yield from _scored_batch(task, batch, store, plan, verdicts)
    for problem in problems:
        yield SampleRow.unanswered(problem.record, problem.status, str(problem))


def _scored_batch(
    task: Task,
    samples: Sequence[Sample],
    store: Store,
    plan: str,
    verdicts: StoredVerdicts | None,
    whole_set: bool = False,
) -> list[SampleRow]:
    """The rows of these samples (`whole_set`: every sample of the plan, read at once)."""
    ids = None if whole_set else [sample.id for sample in samples]
    responses = store.responses(plan, ids)
    failures = store.last_failures(plan, ids)
    for batch in batched([s.id for s in samples if s.id in responses], MAX_IDS):
        for stale in store.failed_since_answered(plan, batch):  # answers to an old prompt
            del responses[stale]
    answered = [(s, responses[s.id].text) for s in samples if s.id in responses]
    judged = _judged(task, answered, verdicts)
    pairs = list(zip(answered, judged, strict=True))
    items = [(s, text, found) for (s, text), found in pairs if not isinstance(found, str)]
    unjudged = {s.id: found for (s, _), found in pairs if isinstance(found, str)}
    scored = iter(_scores(task, items))
    rows: list[SampleRow] = []
    for sample in samples:
        stored = responses.get(sample.id)
        if stored is None:
            failed = failures.get(sample.id) or FailedCall(
                "missing", f"{sample.id}: no answer yet (run the infer stage)"
            )
            rows.append(SampleRow.unanswered(sample.id, *failed))
            continue
        answer: AnsweredFields = {
            "id": sample.id,
            "prompt_hash": stored.prompt_hash,
            "frames": stored.frames,
            "raw_output": stored.text[:RAW_OUTPUT_CAP],
        }
        if len(stored.text) > RAW_OUTPUT_CAP:
            answer["raw_output_cut"] = _cut_note(stored.text, stored.key)
        if stored.truncated:
            answer["truncated"] = True
        score = unjudged.get(sample.id) or next(scored)
        if isinstance(score, str):  # the scorer failed on it: the answer is kept all the same
            rows.append(SampleRow.score_failed(answer, f"{sample.id}: {score}"))
        else:  # a task may mark an answer it cannot score (the score's status and status_detail)
            rows.append(SampleRow.scored(answer, score))
    return rows


Scored = SampleScore | str  # a sample's score, or what went wrong when its scorer failed


def _scores(task: Task, items: Sequence[tuple[Sample, str, Verdicts]]) -> list[Scored]:
    """Each answer's score, or what went wrong, naming the task and its code (a plugin's): a
    scorer that raises, or returns anything but a SampleScore, fails that sample alone; a
    task's own `score_all` that does fails its batch (it scores the batch as a whole). A
    ConfigError (on purpose: what scoring needs is missing) stops the stage."""
    where = f"task {task.name} ({code_of(task)})"
    if not scores_whole_set(task):
        return [_score_one(task, where, item) for item in items]
    try:
        scores = list(task.score_all(items))
    except ConfigError:
        raise
    except Exception as e:  # a bug of the task's code: said, its answers kept
        return [code_failed(task, "score_all()", e)] * len(items)
    if len(scores) != len(items):
        wrong = f"{where}: score_all() returned {len(scores)} scores for {len(items)} answers"
        return [wrong] * len(items)
    return [_checked(where, "score_all()", score) for score in scores]


def _score_one(task: Task, where: str, item: tuple[Sample, str, Verdicts]) -> Scored:
    try:
        score: object = task.score(*item)
    except ConfigError:
        raise
    except Exception as e:  # a bug of the task's code (a plugin's): this sample fails alone
        return code_failed(task, "score()", e)
    return _checked(where, "score()", score)


def _checked(where: str, method: str, score: object) -> Scored:
    if isinstance(score, SampleScore):
        return score
    return (
        f"{where}: {method} returned a {type(score).__name__}, not a SampleScore "
        "(vidbench.SampleScore: its outcome, parsed answer, gold, groups and details; "
        "docs/results-schema.md describes it)"
    )


def _cut_note(text: str, key: str) -> str:
    """Where a reply cut to RAW_OUTPUT_CAP characters for samples.jsonl is kept whole."""
    return (
        f"the first {RAW_OUTPUT_CAP:,} of {len(text):,} characters; the whole reply is in "
        f"store.sqlite (table responses, key {key})"
    )


def judge_calls_of(task: Task, sample: Sample, reply: str) -> list[ModelCall[object]] | str:
    """The task's judge calls about a reply, or what went wrong when its code raised (naming
    the task and its code): that sample is not judged, and its row says why."""
    try:
        return list(task.judge_calls(sample, reply))
    except VidbenchError:
        raise
    except Exception as e:  # a bug of the task's code (a plugin's): this sample alone
        return code_failed(task, "judge_calls()", e)


def _judged(
    task: Task, answered: Sequence[tuple[Sample, str]], verdicts: StoredVerdicts | None
) -> list[Verdicts | str]:
    """Each answered sample's verdicts (`missing` for calls nobody judged), looked up for the
    batch at once, or why the task could not say what to judge (`judge_calls_of`); none at
    all when the run has no judge (a task whose judge columns are optional then leaves them
    empty)."""
    if verdicts is None:
        return [{} for _ in answered]
    calls = [judge_calls_of(task, sample, reply) for sample, reply in answered]
    found = verdicts(
        [call for of_sample in calls if isinstance(of_sample, list) for call in of_sample]
    )
    return [
        of_sample
        if isinstance(of_sample, str)
        else {
            call.item: found.get(call.item, CallResult(call.item, "missing")) for call in of_sample
        }
        for of_sample in calls
    ]
