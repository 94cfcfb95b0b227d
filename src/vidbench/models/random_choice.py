"""`random-choice`: MMWorld's Random Choice baseline, exactly as the paper defines it
(MMWorld paper Table 6): "shuffling candidate answers for each video question before consistently
selecting answer 'a'".

The request's option labels are shuffled with a generator seeded by (seed, sample id) and the
reply is the label that lands first, i.e. the option shown as "a" after the shuffle. The pick
depends only on the seed and the question, never on order, concurrency or resumption. Each
question is right with probability 1 / (its number of options); the task reports that
expectation per column (results.json `chance`), and `--runs N` gives the spread over seeds.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from vidbench.core.errors import ConfigError
from vidbench.core.files import Json
from vidbench.core.requests import Request, Response
from vidbench.models.base import Model
from vidbench.models.registry import ModelOptions, reject_extra


class ShuffledFirstChoice(Model):
    def __init__(self, seed: int = 0) -> None:
        self.spec = "random-choice"
        self.seed = seed

    def identity(self) -> dict[str, Json]:
        return {"spec": self.spec, "seed": self.seed}

    def pick(self, request: Request) -> str:
        shuffled = list(request.choices)
        random.Random(f"{self.seed}:{request.sample_id}").shuffle(shuffled)
        return shuffled[0]

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        return [
            Response(r.key, self.pick(r))
            if r.choices
            else Response(r.key, None, error="random-choice: the request has no options")
            for r in requests
        ]


def build(arg: str, options: ModelOptions) -> Model:
    reject_extra("random-choice", options)
    if arg:
        raise ConfigError("model 'random-choice' takes no argument; its seed comes from --seed")
    return ShuffledFirstChoice(options.seed)
