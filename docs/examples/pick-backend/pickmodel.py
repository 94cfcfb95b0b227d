"""A model backend for vidbench in a package of its own: `--model pick:first` answers every
multiple-choice question with the first option letter it is shown, `pick:last` with the last.

A real backend calls a model where this one reads the prompt; the shape is the same: a factory
that checks the spec and the options, a Model whose identity keys the stored answers, and
`generate`, which gives one Response per Request and reports a failure as a Response with
`error` set, never as an exception.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from vidbench import ConfigError, Json, Model, ModelOptions, Request, Response, reject_extra

OPTION = re.compile(r"\(([A-Z])\)")  # "(A) cube (B) ball ..."
WHICH = ("first", "last")


class PickModel(Model):
    needs_frames = False  # it reads text only: no frame is decoded for it

    def __init__(self, which: str, answer_format: str) -> None:
        self.which = which
        self.answer_format = answer_format
        self.spec = f"pick:{which}"

    def identity(self) -> dict[str, Json]:
        """Everything besides the request that decides an answer: part of every stored key."""
        return {"spec": self.spec, "answer_format": self.answer_format}

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        return [self._answer(request) for request in requests]

    def _answer(self, request: Request) -> Response:
        text = " ".join(message.text for message in request.messages)
        letters = OPTION.findall(text)
        if not letters:
            return Response(request.key, None, error="no options (A), (B), ... in the prompt")
        letter = letters[0] if self.which == "first" else letters[-1]
        return Response(request.key, self.answer_format.format(letter=letter))


def build(arg: str, options: ModelOptions) -> Model:
    """`pick:first` or `pick:last`; `--model-opt answer_format='The answer is {letter}.'`."""
    reject_extra("pick", options, known=("answer_format",))
    if arg not in WHICH:
        raise ConfigError(f"model 'pick:{arg}': expected pick:first or pick:last")
    answer_format = options.extra.get("answer_format", "{letter}")
    if "{letter}" not in answer_format:
        raise ConfigError("pick: answer_format must hold {letter}, e.g. 'Answer: {letter}'")
    return PickModel(arg, answer_format)
