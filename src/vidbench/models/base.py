"""The one model interface every backend implements."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence

from vidbench.core.errors import ConfigError
from vidbench.core.files import Json
from vidbench.core.requests import Request, Response


class Model(ABC):
    """A model named by a spec string (`random`, `openai:gpt-4o`, `hf:...`).

    `generate` answers a batch of requests; a failed request comes back as a Response with
    `error` set, never as an exception, so one bad call never stops a run. `batch_size` is how
    many requests the runner hands over per call (local models batch on the device; API models
    take one and rely on concurrency). `identity()` is everything besides the request that
    decides the answer (spec and settings such as a seed): it is part of every store key.
    """

    spec: str
    batch_size: int = 1
    # False: `start` is a cheap check, run before any frame is decoded. True: `start` is costly
    # (loading weights), run only once a request actually needs the model, so a rerun whose
    # answers are all stored loads nothing.
    start_when_needed: bool = False
    # False: the model answers without images (answers read from a file), so no frame is decoded.
    needs_frames: bool = True

    def identity(self) -> dict[str, Json]:
        return {"spec": self.spec}

    async def start(self) -> None:  # noqa: B027 - optional hook; most backends need no check
        """Check the backend can work (server reachable, key accepted) before any frame is
        decoded; raise ConfigError naming what is wrong. Called once at the start of `infer`."""

    @abstractmethod
    async def generate(self, requests: Sequence[Request]) -> list[Response]: ...

    def timing(self) -> dict[str, float | int] | None:
        """Local models: seconds the device generated (`device_s`) and the CPU prepared batches
        (`prepare_s`), for the run's device share; None for models without a device."""
        return None

    async def aclose(self) -> None:  # noqa: B027 - optional hook; most backends hold nothing
        """Release connections, servers or devices."""


def check_reachable(model: Model) -> None:
    """Start `model` and close it again, outside any event loop: an unreachable server or a
    rejected key raises here, before any work (its ConfigError names what is wrong)."""

    async def check() -> None:
        try:
            await model.start()
        finally:
            await model.aclose()

    asyncio.run(check())


class ModelRef(Model):
    """A model known by the identity stored with its answers: enough to find them in the store
    (the score and report stages), without building the backend or reading its key. It answers
    nothing."""

    def __init__(self, identity: Mapping[str, Json]) -> None:
        self.spec = str(identity["spec"])
        self._identity = dict(identity)

    def identity(self) -> dict[str, Json]:
        return dict(self._identity)

    async def generate(self, requests: Sequence[Request]) -> list[Response]:
        raise ConfigError(f"model {self.spec!r} is known here by its stored identity only")
