"""How one sample counts: the `outcome` every sample row carries (samples.jsonl), set by the
task's scorer, read alike by `view`, `analyze errors`, `compare` and `report`.

`kind` is how the sample counts in a right/wrong column, `reason` why, from a closed set; both
are listed with their meaning in KINDS and REASONS (docs/results-schema.md shows them).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

OutcomeKind = Literal["correct", "wrong", "unscored"]
OutcomeReason = Literal[
    "no-answer", "unparsed", "no-verdict", "verdict-unparsed", "not-graded", "no-gold"
]

KINDS: dict[str, str] = {
    "correct": "counted right",
    "wrong": "counted wrong",
    "unscored": "counted neither right nor wrong (left out of an accuracy's denominator)",
}
REASONS: dict[str, str] = {
    "no-answer": "unscored: there is no answer to score; the row's `status` says why (`data`: a "
    "bad record; `media`, `error`, `empty`, `refused`, `blocked`, `missing`: no answer from the "
    "model)",
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
}
# The reasons each kind may have (None: no reason given).
ALLOWED: dict[str, tuple[str | None, ...]] = {
    "correct": (None,),
    "wrong": (None, "unparsed", "verdict-unparsed"),
    "unscored": (
        "no-answer",
        "unparsed",
        "no-verdict",
        "verdict-unparsed",
        "not-graded",
        "no-gold",
    ),
}
# Every label an outcome can have (`Outcome.label`), in the order the report lists them.
LABELS = ("correct", "wrong", "unparsed", "verdict-unparsed", "no-verdict", "no-answer",
          "not-graded", "no-gold")  # fmt: skip


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


def graded(correct: bool, unparsed: bool = False) -> Outcome:
    """Right or wrong; a wrong answer whose reply named no readable answer says so."""
    if correct:
        return CORRECT
    return Outcome(kind="wrong", reason="unparsed") if unparsed else WRONG


def verdict_unparsed(counted_wrong: bool) -> Outcome:
    """The judge never gave a readable verdict: wrong, or left out, as the protocol says."""
    return Outcome(kind="wrong" if counted_wrong else "unscored", reason="verdict-unparsed")


def derive_outcome(record: Mapping[str, Any]) -> Outcome:
    """The outcome of a record that carries none (samples.jsonl written before outcomes were,
    or a task that sets none), from the fields every benchmark's records had: `status` and
    `error`, `verdict_absent`, `correct`, `unparsed`, and AutoEval-Video's `judge_status` and
    `counted` (the report's sample browser read outcomes this way before)."""
    if record.get("error") is not None or record.get("status", "ok") != "ok":
        if record.get("verdict_absent"):
            return NO_VERDICT
        if record.get("status") == "judge":  # scoring/judge.NO_VERDICT: replies never parsed
            return verdict_unparsed(counted_wrong=False)
        return NO_ANSWER
    judge_status = record.get("judge_status")
    if judge_status in ("error", "missing"):
        return NO_VERDICT
    if judge_status == "unparsed":
        return verdict_unparsed(counted_wrong=bool(record.get("counted")))
    correct = record.get("correct")
    if isinstance(correct, bool):
        return graded(correct, unparsed=bool(record.get("unparsed")))
    if "correct" in record:  # right/wrong, but not decided
        return NO_VERDICT
    return NOT_GRADED
