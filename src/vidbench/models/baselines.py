"""Baselines that need no model: a seeded random choice and a constant answer."""

from __future__ import annotations

import random
from collections.abc import Sequence

from vidbench.core.files import Json
from vidbench.core.requests import Request, Response
from vidbench.models.base import Model


class RandomChoice(Model):
    """Picks one of the request's option labels uniformly, answering "(X)".

    The pick depends only on (seed, sample id), so it is the same whatever the order, concurrency
    or resumption of a run.
    """

    def __init__(self, seed: int = 0) -> None:
        self.spec = "random"
        self.seed = seed

    def identity(self) -> dict[str, Json]:
        return {"spec": self.spec, "seed": self.seed}

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        return [self._answer(r) for r in requests]

    def _answer(self, request: Request) -> Response:
        if not request.choices:
            return Response(request.key, None, error="random: the request has no options")
        pick = random.Random(f"{self.seed}:{request.sample_id}").choice(request.choices)
        return Response(request.key, f"({pick})")


class Constant(Model):
    """Always replies with the same text (`constant:A` answers "A")."""

    def __init__(self, answer: str) -> None:
        self.spec = f"constant:{answer}"
        self.answer = answer

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        return [Response(r.key, self.answer) for r in requests]
