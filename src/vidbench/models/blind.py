"""`blind:<model spec>`: the same model, asked without any image.

It removes every ImagePart from every message and changes nothing else: text parts, their order,
roles, generation settings and request keys stay as the task built them (a message left with no
part at all is dropped, since no API accepts an empty turn). The wrapped model gets the same
--model-opt settings. It is the blind baseline of the reports and the blind filter that drops
questions answerable without looking.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from vidbench.core.errors import ConfigError
from vidbench.core.files import Json
from vidbench.core.messages import ImagePart, Message
from vidbench.core.requests import Request, Response
from vidbench.models.base import Model
from vidbench.models.registry import ModelOptions, load_model


def without_images(messages: Sequence[Message]) -> tuple[Message, ...]:
    stripped = (
        dataclasses.replace(m, content=tuple(p for p in m.content if not isinstance(p, ImagePart)))
        for m in messages
    )
    return tuple(m for m in stripped if m.content)


class Blind(Model):
    def __init__(self, inner: Model) -> None:
        self.inner = inner
        self.spec = f"blind:{inner.spec}"
        self.batch_size = inner.batch_size
        self.start_when_needed = inner.start_when_needed

    def identity(self) -> dict[str, Json]:
        return {"spec": self.spec, "blind": True, "model": self.inner.identity()}

    async def start(self) -> None:
        await self.inner.start()

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        blind = [dataclasses.replace(r, messages=without_images(r.messages)) for r in requests]
        return await self.inner.generate(blind)

    async def aclose(self) -> None:
        await self.inner.aclose()


def build_blind(arg: str, options: ModelOptions) -> Model:
    if not arg:
        raise ConfigError("model 'blind:SPEC' needs the model to wrap, e.g. blind:openai:gpt-4o")
    return Blind(load_model(arg, options))
