"""The one model interface every backend implements."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence

from vidbench.core.errors import ConfigError, VidbenchError, code_of
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


async def start_checked(model: Model) -> None:
    """`model.start()`; an exception other than vidbench's own (a bug of the backend's code, a
    plugin's) becomes a ConfigError naming the backend, which stops the run with its message
    rather than a traceback."""
    try:
        await model.start()
    except VidbenchError:
        raise
    except Exception as e:
        raise ConfigError(f"model {model.spec!r} ({code_of(model)}): start() raised {e!r}") from e


async def answers_of(model: Model, requests: Sequence[Request]) -> list[Response]:
    """`model.generate(requests)` held to its contract: one Response per request, in the
    requests' order, each found by its key (never by its place in the list). What a backend
    gets wrong becomes the failed Response of each request it concerns, its error naming the
    backend's code: an exception, a request it gave no Response for, text that is not a string,
    something that is not a Response. So a backend's bug neither stops a run nor gives a sample
    another sample's answer."""
    where = f"model {model.spec!r} ({code_of(model)})"
    try:
        given: object = await model.generate(requests)
    except Exception as e:  # a backend's bug must not stop the run: each request fails
        return [Response(r.key, None, error=f"{where}: generate() raised {e!r}") for r in requests]
    if not isinstance(given, list | tuple):
        wrong = f"{where}: generate() returned a {type(given).__name__}, not a list of Responses"
        return [Response(r.key, None, error=wrong) for r in requests]
    by_key: dict[str, Response] = {}
    strays: list[str] = []  # what came back for no request
    for response in given:
        if not isinstance(response, Response):
            strays.append(f"a {type(response).__name__}")
        elif response.key not in by_key:  # a repeated key keeps its first Response
            by_key[response.key] = response
    wanted = {r.key for r in requests}
    strays += [f"a Response for key {key!r}" for key in by_key if key not in wanted]
    besides = f" (it returned {', '.join(strays[:3])}{', ...' if len(strays) > 3 else ''})"
    return [_checked(by_key.get(r.key), r, where, besides if strays else "") for r in requests]


def _checked(response: Response | None, request: Request, where: str, besides: str) -> Response:
    if response is None:
        missing = f"{where}: generate() returned no Response for this request{besides}"
        return Response(request.key, None, error=missing)
    if response.text is not None and not isinstance(response.text, str):
        kind = type(response.text).__name__
        return Response(
            request.key, None, error=f"{where}: its Response's text is a {kind}, not a str"
        )
    return response


def check_reachable(model: Model) -> None:
    """Start `model` and close it again, outside any event loop: an unreachable server or a
    rejected key raises here, before any work (its ConfigError names what is wrong)."""

    async def check() -> None:
        try:
            await start_checked(model)
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
