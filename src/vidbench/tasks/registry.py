"""Task names and their variants. A variant is data (FrameSpec changes), never a copy of code.

`4dbench-qa` is the official setting; modifiers after ':' joined by '+' change it:
`time-first`, `timestamps`, `views-K` (K = 1..24 views spread evenly; views-3 is the official
[1, 8, 16]), `frames-N` (N frames per view). E.g. `4dbench-qa:time-first+timestamps`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from vidbench.core.errors import ConfigError
from vidbench.core.requests import GenerationConfig
from vidbench.media.spec import OFFICIAL_4D_VIEWS, FrameSpec, views_evenly
from vidbench.tasks.base import Task

# The paper's robustness study (Table 3) and ablations (Fig. 6), listed for `vidbench tasks`.
NAMED_VARIANTS = (
    "time-first",
    "timestamps",
    *(f"views-{k}" for k in range(1, 7)),
    *(f"frames-{n}" for n in range(1, 10)),
)


def _apply_modifier(spec: FrameSpec, modifier: str) -> FrameSpec:
    if modifier == "time-first":
        return spec.with_(order="time-first")
    if modifier == "timestamps":
        return spec.with_(timestamps=True)
    kind, _, count = modifier.partition("-")
    if kind in ("views", "frames") and count.isdigit():
        n = int(count)
        if kind == "frames":
            return spec.with_(frames=n)
        return spec.with_(views=OFFICIAL_4D_VIEWS if n == 3 else views_evenly(n))
    raise ConfigError(f"unknown task variant {modifier!r}; known: {', '.join(NAMED_VARIANTS)}")


def _fourd_qa(name: str, spec: FrameSpec) -> Task:
    from vidbench.tasks.fourd_qa import FourDQA

    return FourDQA(name, spec, GenerationConfig(temperature=0.0, max_tokens=128))


# base task name -> (default FrameSpec, constructor)
TASKS: dict[str, tuple[FrameSpec, Callable[[str, FrameSpec], Task]]] = {
    "4dbench-qa": (FrameSpec(views=OFFICIAL_4D_VIEWS, frames=6, sampler="interval"), _fourd_qa),
}


def get_task(name: str, generation: dict[str, Any] | None = None, **overrides: object) -> Task:
    """The task a name denotes, with FrameSpec fields and generation settings overridden
    (None values are ignored)."""
    base, _, modifiers = name.partition(":")
    if base not in TASKS:
        raise ConfigError(f"unknown task {base!r}; known: {', '.join(TASKS)}")
    spec, make = TASKS[base]
    for modifier in filter(None, modifiers.split("+")):
        spec = _apply_modifier(spec, modifier)
    spec = spec.with_(**overrides)
    task = make(name, spec)
    if generation:
        unknown = set(generation) - set(task.generation.as_dict())
        if unknown:
            raise ConfigError(f"unknown generation settings {sorted(unknown)}")
        changes = {k: v for k, v in generation.items() if v is not None}
        task.generation = dataclasses.replace(task.generation, **changes)
    return task
