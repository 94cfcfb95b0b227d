"""What goes to a model and what comes back."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal

from pydantic import JsonValue

from vidbench.core.messages import Message


@dataclass(frozen=True)
class GenerationConfig:
    """Decoding settings. They are part of every request's store key."""

    temperature: float = 0.0
    top_p: float = 1.0
    max_tokens: int = 256
    seed: int | None = None

    def as_dict(self) -> dict[str, JsonValue]:
        return asdict(self)


@dataclass(frozen=True)
class Request:
    """One model call. `key` is the store key (content hash of everything that decides the answer).

    `choices` lists the option labels of a multiple-choice question, for baselines that pick one.
    """

    key: str
    sample_id: str
    messages: tuple[Message, ...]
    generation: GenerationConfig = field(default_factory=GenerationConfig)
    choices: tuple[str, ...] = ()


@dataclass(frozen=True)
class Usage:
    """Tokens in and out; `unknown`: how many calls' usage the server did not report (some
    OpenAI-compatible servers send none), counted as 0 tokens, so the totals are a lower bound."""

    input_tokens: int = 0
    output_tokens: int = 0
    unknown: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.unknown + other.unknown,
        )


UNKNOWN_USAGE = Usage(unknown=1)  # one call whose reply reported no usage
# a usage record's (usage.json, results.json) count of calls whose reply reported no tokens
UNKNOWN_USAGE_KEY = "unknown_usage"


def usage_unknown(calls: int) -> str:
    """What a usage with `calls` calls of unknown usage says of itself."""
    counted = "1 call" if calls == 1 else f"{calls} calls"
    return f"usage unknown for {counted} (the server reported no tokens; counted as 0)"


# ok: `text` is the answer. The rest are failures, each recorded and reported as what it is:
# error (the call failed after retries, or was not worth retrying: a rerun may succeed),
# rejected (the API refused the call and would refuse it again: a bad request, a refused key, an
# unknown model, a spent quota, a request too large; something must change first), empty (no
# text came back), refused (the model declined), blocked (a safety filter stopped it).
# no-prediction: a predictions file (models/predictions.py) has no answer for the sample
ResponseStatus = Literal["ok", "error", "rejected", "empty", "refused", "blocked", "no-prediction"]

# The reasons the APIs and engines give for a reply that stopped at its token limit (max_tokens):
# OpenAI chat completions and vLLM "length", Anthropic "max_tokens" (and
# "model_context_window_exceeded"), Gemini "MAX_TOKENS".
TOKEN_LIMIT_STOPS = frozenset(
    {"length", "max_tokens", "model_context_window_exceeded", "MAX_TOKENS"}
)


def stopped_at_token_limit(reason: object) -> bool:
    """Whether a reply's stop reason, as its API or engine names it (a string, or an enum whose
    value is one), says the reply was cut at its token limit: the one place that decides
    `Response.truncated`."""
    return str(getattr(reason, "value", reason)) in TOKEN_LIMIT_STOPS


@dataclass(frozen=True)
class Response:
    """A model's answer to one request.

    A failed call has `status` other than "ok", `text` None (or the refusal text) and `error`
    saying what happened; it is never an empty answer in disguise.
    """

    key: str
    text: str | None
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0
    status: ResponseStatus = "ok"
    # why each earlier attempt of this call failed, when it was tried again (the store keeps
    # every failed attempt: runner/recorder.py); the last failure of a failed call is `error`
    retried: tuple[str, ...] = ()
    # the reply stopped at the generation's token limit (max_tokens), so its text may be cut
    # short: a judge's such reply is never read as a verdict (runner/model_calls.py), an
    # answer's is marked in its sample row
    truncated: bool = False
    # status rejected: what must change before the call can succeed (models/retry.py words
    # it: the key, the model name, the quota, ...); the store keeps it with the failure
    change_first: str | None = None

    def __post_init__(self) -> None:
        if self.status == "ok" and (self.error is not None or self.text is None):
            object.__setattr__(self, "status", "error")

    @property
    def ok(self) -> bool:
        return self.status == "ok"
