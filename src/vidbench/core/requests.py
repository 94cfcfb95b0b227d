"""What goes to a model and what comes back."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from vidbench.core.messages import Message


@dataclass(frozen=True)
class GenerationConfig:
    """Decoding settings. They are part of every request's store key."""

    temperature: float = 0.0
    top_p: float = 1.0
    max_tokens: int = 256
    seed: int | None = None

    def as_dict(self) -> dict[str, Any]:
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
    input_tokens: int = 0
    output_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens, self.output_tokens + other.output_tokens
        )


@dataclass(frozen=True)
class Response:
    """A model's answer to one request; `error` is set (and `text` None) when the call failed."""

    key: str
    text: str | None
    error: str | None = None
    usage: Usage = field(default_factory=Usage)
    latency_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None
