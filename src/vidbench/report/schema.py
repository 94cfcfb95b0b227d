"""The typed, versioned shape of a results directory's files (pydantic v2): `RunFile`
(run.json), `SampleRow` (a line of samples.jsonl, with its shared `Outcome`) and `Results`
(results.json). `ResultsDir` reads and writes every one of them through these models, so
`view`, `analyze`, `compare`, `report` and `figures` read one shape.

Every field of a sample row is typed: a task's own (a caption's metrics, MMWorld's discipline,
AutoEval-Video's verdict, ...) are in its SampleScore's groups, metrics and details; results.json
keeps a task's own fields beside the shared ones. Each file carries `schema_version`. Numbers are
kept at full precision: rounding happens only where a table is shown.

docs/results-schema.md is generated from these models (report/schema_doc.py).
"""

from __future__ import annotations

from typing import Annotated, NotRequired, TypedDict

from pydantic import BaseModel, ConfigDict, Field, JsonValue, PrivateAttr

from vidbench.media.frame import FrameRecord
from vidbench.scoring.outcome import NO_ANSWER, SCORE_FAILED, SCORED, Outcome, SampleScore

SCHEMA_VERSION = 1

__all__ = [
    "SCHEMA_VERSION",
    "ErrorDetail",
    "Outcome",
    "PerRun",
    "Results",
    "RunFile",
    "SampleRow",
    "SampleScore",
]


class AnsweredFields(TypedDict):
    """What the run knows of an answered sample (runner/score.py), before the task's score."""

    id: str
    prompt_hash: str
    frames: list[FrameRecord]
    raw_output: str
    raw_output_cut: NotRequired[str]
    truncated: NotRequired[bool]


SchemaVersion = Annotated[int, Field(description="version of this file's schema")]


class RunFile(BaseModel):
    """run.json: what `vidbench run` was asked (runner/run_config.RunConfig without where it
    ran), so the judge, score and report stages of a stored run need nothing else."""

    model_config = ConfigDict(extra="forbid")

    schema_version: SchemaVersion = SCHEMA_VERSION
    task: str = Field(description="the task's full name, with its variants")
    data: str = Field(description="the data folder, as given")
    model: str = Field(description="the model spec")
    out: str = Field(description="the results directory as given (a moved run is read where it is)")
    seed: int = Field(0, description="the run's seed (bootstrap intervals, random baselines)")
    limit: int | None = Field(None, description="only the first N samples")
    concurrency: int = Field(16, description="requests in flight")
    frames: dict[str, JsonValue] = Field(
        default_factory=dict, description="FrameSpec fields overridden on the command line"
    )
    generation: dict[str, JsonValue] = Field(
        default_factory=dict, description="generation settings overridden (temperature, ...)"
    )
    model_options: dict[str, str] = Field(
        default_factory=dict, description="--model-opt KEY=VALUE settings (never a key)"
    )
    judge: str | None = Field(None, description="the judge's model spec, for judged tasks")
    judge_options: dict[str, str] = Field(
        default_factory=dict, description="--judge-opt KEY=VALUE settings"
    )
    judge_attempts: int = Field(3, description="asks per judge reply that does not parse")
    cache_dir: str | None = Field(None, description="the frame cache")
    model_identity: dict[str, JsonValue] | None = Field(
        None, description="what keys the model's answers (spec and answer-changing settings)"
    )
    judge_identity: dict[str, JsonValue] | None = Field(
        None, description="what keys the judge's verdicts"
    )


# The status of an answered sample its task's scorer failed on (SampleRow.score_failed).
SCORE_STATUS = "score"
ROW_STATUS = (
    "ok, or why the sample is not scored: data (bad record), media, error (a failed call a rerun "
    "retries), rejected (a call the API refused and would refuse again), empty, refused, "
    "blocked, missing (no answer), prompt (the task's code failed on its request), judge (no "
    "usable verdict), score (the task's scorer failed on the answer), or a benchmark's own"
)


class RunFields(BaseModel):
    """What a samples.jsonl row holds besides the task's SampleScore, in the order the file has
    it (SampleRow lists them first: a pydantic model's fields come base by base, the last base
    first)."""

    schema_version: SchemaVersion = SCHEMA_VERSION
    id: str = Field(description="the sample's id (a bad record: the record's name)")
    status: str = Field(SCORED, description=ROW_STATUS)
    error: str | None = Field(
        None, description="the message when there is no answer, or its scorer failed"
    )
    prompt_hash: str | None = Field(None, description="digest of the exact prompt sent")
    frames: list[FrameRecord] | None = Field(
        None,
        description="the images sent, in order: view, index, time_s (a grid: tiles), source "
        "(the digest of the video it is from)",
    )
    raw_output: str | None = Field(None, description="the model's reply")
    raw_output_cut: str | None = Field(
        None, description="set when raw_output was cut short: where the whole reply is"
    )
    truncated: bool | None = Field(
        None,
        description="true when the model's reply stopped at its token limit (max_tokens), so "
        "the answer may be cut short; scored as it is",
    )


ROW_FIELDS = tuple(RunFields.model_fields)


class SampleRow(SampleScore, RunFields):
    """One line of samples.jsonl: one sample (or one record that could not be loaded) as the
    score stage left it: what the run knows of it (its answer, prompt, frames, or why it has
    none), then the task's `SampleScore` (scoring/outcome.py) of it. A row without an answer
    holds the outcome `no-answer` and no other score field."""

    # NaN and infinite numbers written as Python's json module writes (and reads) them
    model_config = ConfigDict(
        frozen=True, extra="forbid", coerce_numbers_to_str=True, ser_json_inf_nan="constants"
    )

    status: str = Field(SCORED, description=ROW_STATUS)  # the row's, not only the score's

    def model_post_init(self, context: object, /) -> None:
        self.__pydantic_fields_set__.add("schema_version")  # every row says its version

    @property
    def failed(self) -> bool:
        """Not scored: no answer (`error`), or an answer the task could not score (`status`);
        these are results.json's `errors`."""
        return self.error is not None or self.status != SCORED

    def record(self) -> dict[str, JsonValue]:
        """The row as the file holds it (JSON types; fields never set are left out): what the
        run knows first, then the task's score."""
        return self.model_dump(mode="json", exclude_unset=True)

    def line(self) -> str:
        """The row as a line of samples.jsonl (`record` as JSON, made by pydantic's serializer:
        a third of the time json.dumps of `record` takes), without the newline."""
        return self.model_dump_json(exclude_unset=True)

    @classmethod
    def scored(cls, answered: AnsweredFields, score: SampleScore) -> SampleRow:
        """The row of an answered sample: what the run knows, then the task's score."""
        run = {**answered, "status": SCORED, "error": None}
        return cls.model_validate({**run, **score.model_dump(exclude_unset=True)})

    @classmethod
    def score_failed(cls, answered: AnsweredFields, error: str) -> SampleRow:
        """The row of an answered sample the task's scorer failed on: what the run knows (the
        answer kept), status `score`, the message, and the outcome `score-failed`."""
        return cls.model_validate(
            {**answered, "status": SCORE_STATUS, "error": error, "outcome": SCORE_FAILED}
        )

    @classmethod
    def unanswered(
        cls, sample_id: str, status: str, error: str, change_first: str | None = None
    ) -> SampleRow:
        """The row of a sample without an answer, or of a record that could not be loaded;
        `change_first`: its call was rejected, and what must change first."""
        fields: dict[str, object] = {"id": sample_id, "status": status, "error": error}
        if change_first is not None:
            fields["change_first"] = change_first
        return cls.model_validate({**fields, "outcome": NO_ANSWER})


class ErrorDetail(BaseModel):
    """A sample counted in `errors`."""

    model_config = ConfigDict(extra="allow", coerce_numbers_to_str=True)

    id: str = Field(description="the sample's id (a bad record: the record's name)")
    status: str = Field(description="why it is not scored (the row's status)")
    error: str = Field(description="the message")
    change_first: str | None = Field(
        None,
        description="a call the API refused and would refuse again as it is: what must change "
        "before it can succeed",
    )
    run: str | None = Field(None, description="repeated runs: the run's folder")


class PerRun(BaseModel):
    """Repeated runs: one run's row."""

    model_config = ConfigDict(extra="allow")

    dir: str = Field(description="the run's results directory")
    seed: int | None = Field(None, description="its seed")
    columns: dict[str, float | None] = Field(description="its columns, unrounded")
    n: int = Field(description="its samples")
    errors: int = Field(description="its errors")
    unparsed: int = Field(0, description="its unreadable replies")
    truncated: int = Field(0, description="its answers that stopped at the token limit")


class Results(BaseModel):
    """results.json: the paper table's row of one run (or the mean of repeated runs), at full
    precision, with its intervals, errors and provenance. A task's own fields follow."""

    model_config = ConfigDict(extra="allow")

    schema_version: SchemaVersion = SCHEMA_VERSION
    task: str = Field(description="the task's full name, with its variants")
    model: str | None = Field(description="the model spec")
    model_identity: dict[str, JsonValue] | None = Field(
        None, description="what keys the model's answers"
    )
    protocol: str | None = Field(None, description="the scoring protocol")
    frame_spec: dict[str, JsonValue] | None = Field(
        None, description="the frames every request had"
    )
    generation: dict[str, JsonValue] | None = Field(None, description="the generation settings")
    n: int = Field(description="samples (and bad records); repeated runs: the total")
    n_scored: int | None = Field(None, description="samples scored")
    errors: int = Field(
        description="samples not scored (no answer, no usable verdict, bad data); more than 0: "
        "the run is incomplete (it exited 3), and tables and figures say so on its row"
    )
    errors_by_status: dict[str, int] = Field(
        default_factory=dict, description="errors counted by status"
    )
    error_details: list[ErrorDetail] = Field(
        default_factory=list, description="each error: id, status, message"
    )
    unparsed: int = Field(0, description="replies the task's parser could not read")
    truncated: int = Field(
        0, description="answers that stopped at the model's token limit (max_tokens), scored as cut"
    )
    unjudged: int | None = Field(
        None,
        description="judged tasks: answers a new judge stage can still decide (not those whose "
        "judge call the API would refuse again as it is: see their change_first)",
    )
    columns: dict[str, float | None] = Field(
        description="the paper table's columns (percent, or the column's scale), unrounded"
    )
    column_n: dict[str, int] = Field(
        default_factory=dict, description="samples each column's value is over"
    )
    column_scale: dict[str, float] | None = Field(
        None,
        description="each column's scale: 100 (percent), or what the mean is multiplied by "
        "(1: a 0..5 judge score)",
    )
    ci95: dict[str, list[float] | None] = Field(
        default_factory=dict, description="each column's 95% bootstrap interval, unrounded"
    )
    column_groups: dict[str, list[str]] | None = Field(
        None, description="the parts the table is printed in (e.g. MMWorld's Table 3, Table 4)"
    )
    chance: dict[str, float | None] | None = Field(
        None, description="expected accuracy of a random-choice answerer per column"
    )
    warnings: list[str] | None = Field(None, description="what the report stage printed as such")
    data: str | None = Field(None, description="the data folder, its full path")
    seed: int | None = Field(None, description="the run's seed")
    # what a command found since the run was scored (its data changed: `stale`); never written
    _stale: str | None = PrivateAttr(None)

    @property
    def stale(self) -> str | None:
        """Why these results no longer hold (the run's data changed since it was scored: a
        command checked, `marked_stale`), or None."""
        return self._stale

    def marked_stale(self, why: str) -> Results:
        """These results, marked `stale` for the reason `why` (the file is left as it is)."""
        copy = self.model_copy()
        copy._stale = why
        return copy

    plan: str | None = Field(None, description="the plan key of the stored answers")
    judge: dict[str, JsonValue] | None = Field(None, description="the judge's identity")
    usage: dict[str, JsonValue] | None = Field(
        None,
        description="requests, input and output tokens (and the judge's); unknown_usage: the "
        "calls whose reply reported no tokens, counted as 0 (the totals are a lower bound)",
    )
    cost: dict[str, JsonValue] | None = Field(
        None, description="US dollars, with a price table (lower_bound: some usage unknown)"
    )
    timing: dict[str, JsonValue] | None = Field(None, description="local models: device seconds")
    versions: dict[str, str] | None = Field(None, description="Python and package versions")
    git_commit: str | None = Field(None, description="the vidbench checkout's commit")
    created: str | None = Field(None, description="when (UTC)")
    runs: int | None = Field(None, description="repeated runs: how many (columns: their mean)")
    seeds: list[int | None] | None = Field(None, description="repeated runs: their seeds")
    std: dict[str, float | None] | None = Field(
        None, description="repeated runs: each column's population standard deviation"
    )
    per_run: list[PerRun] | None = Field(None, description="repeated runs: each run's row")

    def document(self) -> dict[str, JsonValue]:
        """The results as the file holds them (JSON types; fields never set are left out)."""
        return self.model_dump(mode="json", exclude_unset=True)
