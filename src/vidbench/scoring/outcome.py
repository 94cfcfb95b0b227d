"""How one sample counts: the `SampleScore` a task's scorer returns for each answered sample
(`Task.score`), with its `outcome`; every row of samples.jsonl holds one (report/schema.SampleRow)
and `view`, `analyze`, `compare`, `report` and `export` read only its typed fields.

An outcome's `kind` is how the sample counts in a right/wrong column, `reason` why, from a closed
set; both are listed with their meaning in KINDS and REASONS (docs/results-schema.md shows them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

OutcomeKind = Literal["correct", "wrong", "unscored"]
OutcomeReason = Literal[
    "no-answer",
    "unparsed",
    "no-verdict",
    "verdict-unparsed",
    "not-graded",
    "no-gold",
    "score-failed",
]

KINDS: dict[str, str] = {
    "correct": "counted right",
    "wrong": "counted wrong",
    "unscored": "counted neither right nor wrong (left out of an accuracy's denominator)",
}
REASONS: dict[str, str] = {
    "no-answer": "unscored: there is no answer to score; the row's `status` says why (`data`: a "
    "bad record; `media`, `error`, `rejected`, `empty`, `refused`, `blocked`, `missing`: no "
    "answer from the model)",
    "unparsed": "wrong or unscored: the reply named no answer the task's parser could read; "
    "the protocol counts it wrong (4D-Bench QA, MMWorld's rule scoring, or the judge said no) "
    'or leaves it out (a declared benchmark with `unparsed = "drop"`, as Video-MME\'s script)',
    "no-verdict": "unscored: the judge's verdict is missing (its call failed or was not made "
    "yet); a new judge stage can still decide it",
    "verdict-unparsed": "wrong or unscored: the judge replied, but never with a readable "
    "verdict; the protocol counts it wrong (AutoEval-Video's `robust`) or leaves it out "
    "(AutoEval-Video's `official`, MMWorld)",
    "not-graded": "unscored: the sample is scored, by numbers that are not right or wrong (a "
    "caption's metrics and judge scores)",
    "no-gold": "unscored: the model answered, but the row has no gold answer to score it against "
    "(a test split whose answers are kept apart or not public); `vidbench predictions` writes "
    "the answers for the benchmark's own server",
    "score-failed": "unscored: the model answered, but the task's scorer failed on the answer "
    "(`score` or `judge_calls` raised, or `score` returned no SampleScore); the row's `error` "
    "names the task's code and what went wrong; once it is fixed, the same run again scores "
    "the stored answer (no model call)",
}
# The reasons each kind may have (None: no reason given).
ALLOWED: dict[str, tuple[str | None, ...]] = {
    "correct": (None,),
    "wrong": (None, "unparsed", "verdict-unparsed"),
    "unscored": get_args(OutcomeReason),  # every reason
}
# Every label an outcome can have (`Outcome.label`), in the order the report lists them.
LABELS = ("correct", "wrong", "unparsed", "verdict-unparsed", "no-verdict", "no-answer",
          "not-graded", "no-gold", "score-failed")  # fmt: skip


class Outcome(BaseModel):
    """How a sample counts (`kind`) and why (`reason`): KINDS and REASONS say what each means."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: OutcomeKind = Field(
        description="correct or wrong: counted so in right/wrong columns; unscored: in neither"
    )
    reason: OutcomeReason | None = Field(
        default=None,
        description="why: no-answer, unparsed, no-verdict, verdict-unparsed, not-graded, "
        "no-gold (required for unscored, never on correct)",
    )

    @model_validator(mode="after")
    def _reason_fits_kind(self) -> Outcome:
        if self.reason not in ALLOWED[self.kind]:
            allowed = ", ".join(str(r) for r in ALLOWED[self.kind])
            raise ValueError(
                f"outcome {self.kind!r} cannot have reason {self.reason!r} ({allowed})"
            )
        return self

    @property
    def label(self) -> str:
        """One word for it: the reason when there is one, else the kind."""
        return self.reason or self.kind

    @property
    def graded(self) -> bool:
        """Counted right or wrong."""
        return self.kind != "unscored"


CORRECT = Outcome(kind="correct", reason=None)
WRONG = Outcome(kind="wrong", reason=None)
NO_ANSWER = Outcome(kind="unscored", reason="no-answer")
NO_VERDICT = Outcome(kind="unscored", reason="no-verdict")
NOT_GRADED = Outcome(kind="unscored", reason="not-graded")
NO_GOLD = Outcome(kind="unscored", reason="no-gold")
SCORE_FAILED = Outcome(kind="unscored", reason="score-failed")


def graded(correct: bool, unparsed: bool = False) -> Outcome:
    """Right or wrong; a wrong answer whose reply named no readable answer says so."""
    if correct:
        return CORRECT
    return Outcome(kind="wrong", reason="unparsed") if unparsed else WRONG


def verdict_unparsed(counted_wrong: bool) -> Outcome:
    """The judge never gave a readable verdict: wrong, or left out, as the protocol says."""
    return Outcome(kind="wrong" if counted_wrong else "unscored", reason="verdict-unparsed")


# The status of a scored sample whose answer the task could score.
SCORED = "ok"


class SampleScore(BaseModel):
    """What a task makes of one answered sample (`Task.score` returns it): how it counts, the
    answer read from the reply and the right one, the groups it counts in, its numbers, and the
    benchmark's own fields, each in one typed place. samples.jsonl's rows hold it beside what the
    run knows (report/schema.SampleRow), and `column_values` reads it back."""

    model_config = ConfigDict(frozen=True, extra="forbid")
    # Defaults are given as `default=`, never positionally: a type checker without pydantic's
    # mypy plugin (a benchmark plugin's own) then knows these fields may be left out. The maps
    # are typed Mapping (pydantic still makes dicts of them) so that a task may pass its own
    # dict[str, str] or dict[str, float]: a dict parameter would refuse them (invariance).

    outcome: Outcome = Field(description="how the sample counts, and why")
    parsed: str | None = Field(
        default=None, description="the answer read from the reply (an option label, a text), if any"
    )
    gold: str | None = Field(default=None, description="the right answer, for tasks that have one")
    unparsed: bool | None = Field(
        default=None,
        description="the task could not read the reply (an option, a caption marker) or, "
        "AutoEval-Video, the judge's verdict",
    )
    judge_reply: str | None = Field(
        default=None, description="judged tasks: the judge's reply that decided the outcome"
    )
    groups: Mapping[str, str | list[str]] = Field(
        default_factory=dict,
        description="the groups the sample counts in, by the benchmark's group fields (4D-Bench "
        "`subtask`, MMWorld `discipline`, a declared benchmark's `groups`; a list: it counts in "
        "each); the HTML report groups samples by them",
    )
    metrics: Mapping[str, float | None] = Field(
        default_factory=dict,
        description="the sample's numbers the task's columns average (a caption's CIDEr, a "
        "judge's 0..5 score, the chance a random choice is right); None: not measured",
    )
    details: Mapping[str, JsonValue] = Field(
        default_factory=dict,
        description="the benchmark's own fields (JSON values): a caption and its references, "
        "a judge's verdict and reason, MMWorld's annotation flags, ...",
    )
    status: str = Field(
        default=SCORED,
        description="ok, or why the task could not score the answer it has: judge (no usable "
        "verdict), data (the sample cannot be judged)",
    )
    status_detail: str | None = Field(
        default=None, description="why a task could not score an answer it has (e.g. no verdict)"
    )
    verdict_absent: bool | None = Field(
        default=None, description="judged tasks: the verdict's call failed or was not made yet"
    )
    change_first: str | None = Field(
        default=None,
        description="a call the API refused and would refuse again as it is (the model's: "
        "status rejected; the judge's: status judge): what must change before it can succeed",
    )

    def group(self, field: str) -> str | None:
        """The one group this sample has for `field` (a benchmark whose group fields hold one
        value each reads them so); None when it has none; ValueError when it has several."""
        value = self.groups.get(field)
        if isinstance(value, list):
            raise ValueError(f"the sample counts in several {field!r} groups: {value}")
        return value

    @property
    def correct(self) -> bool | None:
        """Right (True) or wrong (False) when the sample counts so; None when it is unscored."""
        return self.outcome.kind == "correct" if self.outcome.graded else None
