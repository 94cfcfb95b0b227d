"""LLM judges: what an answer left without a verdict looks like in the results.

A judge's questions are `ModelCall`s and its verdicts `CallResult`s (scoring/model_call.py);
this module says how a task records an answer whose verdict is missing or unreadable, so every
judged benchmark reports it the same way.
"""

from __future__ import annotations

from typing import NotRequired, TypedDict

from vidbench.scoring.model_call import CallResult
from vidbench.scoring.outcome import NO_VERDICT as NO_VERDICT_OUTCOME
from vidbench.scoring.outcome import Outcome, verdict_unparsed

# The status of an answer left without a verdict, in samples.jsonl and results' errors.
NO_VERDICT = "judge"


class NoVerdictFields(TypedDict):
    """The SampleScore fields of an answer left without a usable verdict (SampleScore(**them))."""

    status: str
    status_detail: str
    verdict_absent: bool
    outcome: Outcome
    change_first: NotRequired[str]  # the judge call was refused: what must change first


def no_verdict_fields(
    sample_id: str, verdict: CallResult[object], unparsed_why: str = ""
) -> NoVerdictFields:
    """The score fields of an answer the judge gave no usable verdict on: an error of status
    `judge` (never counted right or wrong), saying why; `verdict_absent` marks those a new judge
    stage can still decide (a failed or missing call, not replies that never parsed or stopped
    at their token limit), and the
    outcome is `no-verdict` for those, `verdict-unparsed` for the others; a judge call the API
    refused and would refuse again says what must change first (`change_first`)."""
    why = verdict.why_absent() if verdict.absent else verdict.why_unread(unparsed_why)
    fields: NoVerdictFields = {
        "status": NO_VERDICT,
        "status_detail": f"{sample_id}: judge verdict {verdict.status}: {why}",
        "verdict_absent": verdict.absent,
        "outcome": NO_VERDICT_OUTCOME if verdict.absent else verdict_unparsed(counted_wrong=False),
    }
    if verdict.change_first is not None:
        fields["change_first"] = verdict.change_first
    return fields


def no_verdict_message(n: int) -> str:
    """What every judged command prints when answers are left without a verdict."""
    answers = "1 answer has" if n == 1 else f"{n} answers have"
    return f"{answers} no verdict; run the judge stage again"
