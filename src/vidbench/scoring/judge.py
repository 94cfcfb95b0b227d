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

    @property
    def ok(self) -> bool:
        return self.status == "ok"
