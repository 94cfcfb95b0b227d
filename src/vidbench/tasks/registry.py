"""Task names and their variants, for any benchmark. A variant is data, never a copy of code.

A task name is `BASE[:MODIFIER+MODIFIER...]`. Each benchmark lists its task entries (see
`vidbench.registry`); an entry says which modifiers it knows: frame modifiers change
the FrameSpec; any other modifier is handed to the task's constructor (e.g. a scoring mode).
This module knows no benchmark: it resolves a name against the entries it is given.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from pydantic import TypeAdapter, ValidationError

from vidbench.core.errors import ConfigError, VidbenchError
from vidbench.core.files import Json
from vidbench.core.requests import GenerationConfig
from vidbench.media.spec import FrameSpec
from vidbench.tasks.base import Task


@dataclass(frozen=True)
class TaskRequest:
    """A task name, split by the registry: what a task constructor is given."""

    name: str  # as the user wrote it, e.g. "4dbench-caption:official+frames-3"
    base: str  # "4dbench-caption"
    spec: FrameSpec  # the entry's default frames with the frame modifiers applied
    frame_modifiers: tuple[str, ...]  # ("frames-3",): they decide the frames the model sees
    modifiers: tuple[str, ...]  # ("official",): the rest, for the constructor to interpret

    @property
    def frames_name(self) -> str:
        """The name without the constructor's modifiers: the same frames, the same answers."""
        return self.base + (":" + "+".join(self.frame_modifiers) if self.frame_modifiers else "")


# make(request) -> Task; a constructor raises ConfigError for modifiers it does not know.
TaskFactory = Callable[[TaskRequest], Task]
FrameModifier = Callable[[FrameSpec, str], "FrameSpec | None"]


@dataclass(frozen=True)
class TaskEntry:
    make: TaskFactory
    spec: FrameSpec  # the task's default (official) frames
    frame_modifier: FrameModifier  # the FrameSpec a modifier asks for, None if not a frame one
    variants: tuple[str, ...]  # named variants, for `vidbench tasks` and error messages


def no_other_modifiers(request: TaskRequest, known: tuple[str, ...]) -> None:
    if request.modifiers:
        raise ConfigError(
            f"{request.name}: unknown task variant {request.modifiers[0]!r}; "
            f"known: {', '.join(known)}"
        )


def resolve(name: str, entries: Mapping[str, TaskEntry]) -> TaskRequest:
    """Split a task name into its base, frames and remaining modifiers."""
    base, _, modifier_text = name.partition(":")
    if base not in entries:
        raise ConfigError(f"unknown task {base!r}; known: {', '.join(entries)}")
    entry = entries[base]
    spec, frame_modifiers, others = entry.spec, [], []
    for modifier in filter(None, modifier_text.split("+")):
        changed = entry.frame_modifier(spec, modifier)
        if changed is None:
            others.append(modifier)
        else:
            spec = changed
            frame_modifiers.append(modifier)
    return TaskRequest(name, base, spec, tuple(frame_modifiers), tuple(others))


def _made(make: TaskFactory, request: TaskRequest) -> Task:
    """The factory's task; ConfigError naming the factory's code (a plugin's) when it raises
    anything but vidbench's own errors or makes something that is not a Task."""
    try:
        task: object = make(request)
    except VidbenchError:  # its own word: an unknown variant, a bad setting
        raise
    except Exception as e:
        raise ConfigError(f"{_factory(request, make)} raised {e!r}") from e
    if not isinstance(task, Task):
        made = type(task).__name__
        raise ConfigError(f"{_factory(request, make)} made a {made}, not a vidbench Task")
    return task


def _factory(request: TaskRequest, make: TaskFactory) -> str:
    """The factory of a task, for messages: its code's place (a functools.partial: the
    function it calls)."""
    function = getattr(make, "func", make)
    name = getattr(function, "__qualname__", type(function).__name__)
    return f"task {request.name}: its factory {getattr(function, '__module__', '?')}.{name}"


def build_task(
    entries: Mapping[str, TaskEntry],
    name: str,
    generation: Mapping[str, Json] | None = None,
    **overrides: object,
) -> Task:
    """The task a name denotes, with FrameSpec fields and generation settings overridden
    (None values are ignored)."""
    request = resolve(name, entries)
    request = dataclasses.replace(request, spec=request.spec.with_(**overrides))
    task = _made(entries[request.base].make, request)
    if generation:
        unknown = set(generation) - set(task.generation.as_dict())
        if unknown:
            raise ConfigError(f"unknown generation settings {sorted(unknown)}")
        changed = task.generation.as_dict() | {k: v for k, v in generation.items() if v is not None}
        try:
            task.generation = TypeAdapter(GenerationConfig).validate_python(changed)
        except ValidationError as e:
            raise ConfigError(f"generation settings: {e}") from None
    return task
