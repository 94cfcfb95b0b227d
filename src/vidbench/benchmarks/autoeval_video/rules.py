"""AutoEval-Video's rules judge (paper sections 3.4 and 4.1; README.md).

The prompt is the instance's Rule with the answer inserted exactly as the official script does,
sent as one user message. A reply is read by a named parser, `official` (the official
`check_judge`) or `robust` (scoring/rule_judge.py says what each accepts).

A judge protocol fixes the parser, what happens to a verdict that never parses (`drop`: left out
of the denominator, as the official script does; `wrong`: counted as incorrect), how many times
an unreadable reply is asked again, what an empty answer gets, and the judge's sampling settings.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import JsonValue

from vidbench.benchmarks.autoeval_video.loader import DIMENSIONS, MARKER
from vidbench.core.errors import ConfigError
from vidbench.core.messages import user
from vidbench.core.requests import GenerationConfig
from vidbench.scoring.judge import no_verdict_fields
from vidbench.scoring.model_call import CallResult, ModelCall
from vidbench.scoring.outcome import WRONG, SampleScore, graded, verdict_unparsed
from vidbench.scoring.rule_judge import Judgment, assemble_prompt, parse_official, parse_robust

PROMPT_VERSION = "autoeval-rules-v1"
OVERALL = "Overall"
COLUMNS = (OVERALL, *DIMENSIONS)
# the group field of an instance (its column)
DIMENSION = "dimension"
# The official script's retry loop: `maxtry = 10`, decremented per failure, gives up when a
# failure finds it at 0, so an instance is asked 11 times before it is dropped.
OFFICIAL_ATTEMPTS = 11


PARSERS: dict[str, Callable[[str], Judgment | None]] = {
    "official": parse_official,
    "robust": parse_robust,
}
UnparsedPolicy = Literal["drop", "wrong"]
EmptyPolicy = Literal["judge", "wrong"]


@dataclass(frozen=True)
class JudgeProtocol:
    """How a judge's replies become accuracy. `name` says which preset, with any changes."""

    name: str
    parser: str
    unparsed: UnparsedPolicy  # a verdict that never parses: drop it or count it wrong
    attempts: int  # times an unreadable reply is asked (each attempt stored)
    empty: EmptyPolicy  # an empty answer: send it to the judge, or count it wrong unasked
    generation: GenerationConfig

    def __post_init__(self) -> None:
        if self.parser not in PARSERS:
            raise ConfigError(f"unknown verdict parser {self.parser!r} ({', '.join(PARSERS)})")
        if self.unparsed not in ("drop", "wrong"):
            raise ConfigError(f"unparsed-verdict policy {self.unparsed!r}: choose drop or wrong")
        if self.empty not in ("judge", "wrong"):
            raise ConfigError(f"empty-answer policy {self.empty!r}: choose judge or wrong")
        if self.attempts < 1:
            raise ConfigError(f"judge attempts must be at least 1, got {self.attempts}")

    def with_(self, **changes: Any) -> JudgeProtocol:  # Any: each setting has its own type
        """A copy with some settings changed (None: keep); the name records each change."""
        changes = {k: v for k, v in changes.items() if v is not None and getattr(self, k) != v}
        if not changes:
            return self
        name = self.name + "".join(f"+{k}={v}" for k, v in sorted(changes.items()))
        return dataclasses.replace(self, name=name, **changes)

    def as_dict(self) -> dict[str, JsonValue]:
        return {**dataclasses.asdict(self), "generation": self.generation.as_dict()}

    @property
    def parse(self) -> Callable[[str], Judgment | None]:
        return PARSERS[self.parser]


# The official script sends no sampling settings, so the API's defaults (temperature 1, top_p 1,
# no output cap: 4096 is the most gpt-4-1106-preview writes) apply; re-asking an unreadable
# reply at temperature 1 is what makes its retries work.
PROTOCOLS: dict[str, JudgeProtocol] = {
    "official": JudgeProtocol(
        "official",
        "official",
        "drop",
        OFFICIAL_ATTEMPTS,
        "judge",
        GenerationConfig(temperature=1.0, top_p=1.0, max_tokens=4096),
    ),
    "robust": JudgeProtocol(
        "robust", "robust", "wrong", 3, "wrong", GenerationConfig(temperature=0.0, max_tokens=1024)
    ),
}
DEFAULT_PROTOCOL = "robust"


def get_protocol(name: str) -> JudgeProtocol:
    if name not in PROTOCOLS:
        raise ConfigError(f"unknown judge protocol {name!r} ({', '.join(PROTOCOLS)})")
    return PROTOCOLS[name]


def rules_call(item: str, rule: str, answer: str, protocol: JudgeProtocol) -> ModelCall[Judgment]:
    """The judge call for one answer under an instance's rule."""
    if MARKER not in rule:
        raise ConfigError(f"{item}: the rule has no {MARKER!r} marker")
    message = user(assemble_prompt(rule, answer))
    return ModelCall(item, (message,), PROMPT_VERSION, protocol.parse, protocol.generation)


def is_empty(answer: str | None) -> bool:
    return answer is None or not answer.strip()


def empty_outcome(groups: Mapping[str, str] | None = None) -> SampleScore:
    """An empty answer under the `wrong` policy: incorrect, no judge asked."""
    details: dict[str, JsonValue] = {
        "verdict": 0,
        "reason": "empty answer (not sent to the judge)",
        "judge_status": "empty-answer",
        "attempts": 0,
        "judge_error": None,
        "dropped": False,
        "empty_answer": True,
    }
    return SampleScore(outcome=WRONG, unparsed=False, groups=dict(groups or {}), details=details)


def outcome(
    verdict: CallResult[object],
    protocol: JudgeProtocol,
    groups: Mapping[str, str] | None = None,
    empty_answer: bool = False,
) -> SampleScore:
    """An instance's score from its verdict: its outcome is graded when it is in the
    denominator.

    A judge call that failed (`error`) or was not made yet (`missing`) is not counted under any
    policy, is asked again by the next run, and makes the answer an error of status `judge`;
    only a reply that never parsed follows the protocol's `unparsed` policy.
    """
    judged = verdict.ok
    unparsed = verdict.status == "unparsed"
    value = verdict.value_as(Judgment) if judged else None
    details: dict[str, JsonValue] = {
        "verdict": value.verdict if value else None,
        "reason": value.reason if value else None,
        "judge_status": verdict.status,
        "attempts": verdict.attempts,
        "judge_error": verdict.error,
        "dropped": unparsed and protocol.unparsed == "drop",
        "empty_answer": empty_answer,
    }
    if not (judged or unparsed):  # a failed or missing call: an error of status `judge`
        return SampleScore(
            unparsed=unparsed,
            judge_reply=verdict.reply,
            groups=dict(groups or {}),
            details=details,
            **no_verdict_fields(verdict.item, verdict),
        )
    return SampleScore(
        outcome=verdict_unparsed(protocol.unparsed == "wrong")
        if unparsed
        else graded(bool(value and value.verdict == 1)),
        unparsed=unparsed,
        judge_reply=verdict.reply,
        groups=dict(groups or {}),
        details=details,
    )


def column_values(scores: Sequence[SampleScore]) -> dict[str, list[float]]:
    """Overall and per-dimension correctness of the counted instances (micro accuracy)."""
    values: dict[str, list[float]] = {c: [] for c in COLUMNS}
    for score in scores:
        dimension = score.group(DIMENSION)
        if score.correct is not None and dimension is not None:
            values[dimension].append(float(score.correct))
            values[OVERALL].append(float(score.correct))
    return values


def summary(scores: Sequence[SampleScore]) -> dict[str, int]:
    """The counts behind the denominators (scores of answers that could not be judged at all,
    e.g. bad input, are not part of any count here)."""
    scored = [s for s in scores if s.status != "data"]
    status = [s.details.get("judge_status") for s in scored]
    return {
        "n_judged": sum(1 for s in scored if s.outcome.graded),
        "n_dropped": sum(1 for s in scored if s.details.get("dropped")),
        "n_unparsed": sum(1 for s in scored if s.unparsed),
        "n_judge_errors": status.count("error"),
        "n_not_judged_yet": status.count("missing"),
        "n_empty_answers": sum(1 for s in scored if s.details.get("empty_answer")),
    }
