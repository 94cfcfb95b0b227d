"""LLM judges: what one judgment asks, and what came of it.

A benchmark builds JudgeCalls (its prompt, prompt version and reply parser); runner/judging.py
sends them to the judge model concurrently, stores every reply in the store's `judgments` table
and never asks the same thing twice.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from vidbench.core.messages import Message
from vidbench.core.requests import GenerationConfig

# ok: a reply parsed to a value. unparsed: every attempt's reply failed the parser.
# error: the judge call itself failed (after the backend's retries). missing: not judged yet.
VerdictStatus = Literal["ok", "unparsed", "error", "missing"]


@dataclass(frozen=True)
class JudgeCall:
    """One question to the judge.

    `item` names what is judged (unique within a run, e.g. "<uid>:appearance"). `parse` turns a
    reply into a value, or None when the reply cannot be read; an unreadable reply is asked again
    (a new attempt, stored under its own key) up to the judge runner's attempt limit.
    `prompt_version` names the prompt template so a changed prompt never reuses old verdicts.
    """

    item: str
    messages: tuple[Message, ...]
    prompt_version: str
    parse: Callable[[str], Any] = field(compare=False, repr=False)
    generation: GenerationConfig = field(
        default_factory=lambda: GenerationConfig(temperature=0.0, max_tokens=1024)
    )


@dataclass(frozen=True)
class Verdict:
    item: str
    status: VerdictStatus
    value: Any = None
    reply: str | None = None  # the last reply read (the one parsed, when status is ok)
    attempts: int = 0
    error: str | None = None
    asked: int = 0  # calls sent to the judge for this verdict by this run (0: all from the store)

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    @property
    def absent(self) -> bool:
        """No verdict was given: the call failed or has not been made yet (a later judge stage
        asks again)."""
        return self.status in ("error", "missing")

    def why_absent(self) -> str:
        if self.status == "error":
            return f"the judge call failed ({self.error}); the next judge stage asks again"
        return (
            "no stored verdict: the judge stage has not run, was interrupted, or its call "
            "failed; the next judge stage asks again"
        )


# The status of an answer left without a verdict, in samples.jsonl and results' errors.
NO_VERDICT = "judge"


def no_verdict_fields(sample_id: str, verdict: Verdict, unparsed_why: str = "") -> dict[str, Any]:
    """Record fields of an answer the judge gave no usable verdict on: an error of status
    `judge` (never counted right or wrong), saying why; `verdict_absent` marks those a new judge
    stage can still decide (a failed or missing call, not replies that never parsed)."""
    why = verdict.why_absent() if verdict.absent else unparsed_why
    return {
        "status": NO_VERDICT,
        "status_detail": f"{sample_id}: judge verdict {verdict.status}: {why}",
        "verdict_absent": verdict.absent,
    }


def no_verdict_message(n: int) -> str:
    """What every judged command prints when answers are left without a verdict."""
    answers = "1 answer has" if n == 1 else f"{n} answers have"
    return f"{answers} no verdict; run the judge stage again"
