"""Cached model calls: what one call asks a model, what came of it, and reading structured data
out of its free-text reply (`find_json`).

Every model call whose reply vidbench parses and keeps is a `ModelCall`: an LLM judge's verdict
on an answer (AutoEval-Video's rules, MMWorld's judge, 4D-Bench's GPT-Appearance/Action, error
types), and a construction pipeline's generated questions, checks and captions. The caller builds
the call (its prompt, prompt version and reply parser); runner/model_calls.py sends calls
concurrently, stores every reply in the store's `calls` table and never asks the same thing
twice. A judge's `CallResult` is its verdict.

Both are generic in the value the parser returns: `ModelCall[Judgment]` gives
`CallResult[Judgment]` through runner/model_calls.py. A task's scorer receives its verdicts as
`CallResult[object]` (a task's calls may parse to different types) and reads each value with
`value_as(TYPE)`, which checks it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, Literal, TypeVar

from pydantic import JsonValue

from vidbench.core.messages import Message
from vidbench.core.requests import GenerationConfig

# ok: a reply parsed to a value. unparsed: every attempt's reply failed the parser, or a reply
# stopped at its token limit (`truncated`: never parsed, and not asked again, since the same
# call would stop there again).
# error: the call itself failed (after the backend's retries). missing: not asked yet.
CallStatus = Literal["ok", "unparsed", "error", "missing"]

Value = TypeVar("Value", covariant=True)  # what a call's parser makes of a reply
Wanted = TypeVar("Wanted")


@dataclass(frozen=True)
class ModelCall(Generic[Value]):
    """One question to a model whose reply is parsed and kept.

    `item` names what is asked about (unique within a batch, e.g. "<uid>:appearance"). `parse`
    turns a reply into a value, or None when the reply cannot be read; an unreadable reply is
    asked again (a new attempt, stored under its own key) up to the attempt limit.
    `prompt_version` names the prompt template so a changed prompt never reuses old replies.
    """

    item: str
    messages: tuple[Message, ...]
    prompt_version: str
    parse: Callable[[str], Value | None] = field(compare=False, repr=False)
    generation: GenerationConfig = field(
        default_factory=lambda: GenerationConfig(temperature=0.0, max_tokens=1024)
    )


@dataclass(frozen=True)
class CallResult(Generic[Value]):
    item: str
    status: CallStatus
    value: Value | None = None  # the parsed reply (status ok), else None
    reply: str | None = None  # the last reply read (the one parsed, when status is ok)
    attempts: int = 0
    error: str | None = None
    asked: int = 0  # calls sent to the model for this result by this run (0: all from the store)
    truncated: bool = False  # unparsed because the reply stopped at its token limit (max_tokens)
    # error: the API refused the call and would refuse it again as it is (status rejected):
    # what must change before it can succeed (models/retry.py words it)
    change_first: str | None = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def value_as(self, kind: type[Wanted]) -> Wanted | None:
        """The parsed value as the `kind` the call's parser makes (None when there is none);
        TypeError when it is of another type (a verdict read by the wrong task)."""
        if self.value is None:
            return None
        if not isinstance(self.value, kind):
            raise TypeError(
                f"{self.item}: the call's value is a {type(self.value).__name__}, "
                f"not a {kind.__name__}"
            )
        return self.value

    @property
    def absent(self) -> bool:
        """No result was given: the call failed or has not been made yet (a later run asks
        again)."""
        return self.status in ("error", "missing")

    def why_unread(self, unparsed_why: str) -> str:
        """Why a reply gave no value: `unparsed_why` (the caller's words for a reply its parser
        could not read), or that the reply was cut at its token limit."""
        if self.truncated:
            return (
                "the reply stopped at its token limit (max_tokens), so it may be cut short and "
                "is not read"
            )
        return unparsed_why

    def why_absent(self) -> str:
        if self.change_first is not None:
            return (
                f"the judge call was refused ({self.error}); asked again as it is, it is refused "
                f"again, so a rerun alone does not help: change {self.change_first} first, then "
                "run the judge stage again"
            )
        if self.status == "error":
            return f"the judge call failed ({self.error}); the next judge stage asks again"
        return (
            "no stored verdict: the judge stage has not run, was interrupted, or its call "
            "failed; the next judge stage asks again"
        )


_FENCE = re.compile(r"```(?:json)?")
_OPENING = re.compile(r"[\[{]")
_NESTING = re.compile(r"[\[{\s]+")


JsonBlock = dict[str, JsonValue] | list[JsonValue]


def find_json(reply: str, where: Callable[[JsonBlock], bool] | None = None) -> JsonBlock | None:
    """The first JSON object or list in a reply (code fences and prose around it are
    tolerated) that `where` accepts (any, without it), or None when there is none. A block
    `where` refuses is passed over whole: "step [1]" or `{"step": 1}` in the reasoning before
    the answer's block does not hide it; nor does a degenerate run of brackets too deep to
    decode (its reply is stored: raising would stop every rerun at it)."""
    text = _FENCE.sub("", reply)
    decoder = json.JSONDecoder()
    start = 0
    while (match := _OPENING.search(text, start)) is not None:
        start = match.start() + 1
        try:
            value, end = decoder.raw_decode(text, match.start())
        except json.JSONDecodeError:
            continue
        except RecursionError:  # "[[[[..." past Python's depth: a degenerate reply
            run = _NESTING.match(text, match.start())
            start = run.end() if run else start
            continue
        block: JsonBlock | None = None
        if isinstance(value, dict):
            block = {str(k): v for k, v in value.items()}
        elif isinstance(value, list):
            block = value
        if block is None:
            continue
        if where is None or where(block):
            return block
        start = end
    return None
