"""Task names and their variants. A variant is data, never a copy of code.

A task name is `BASE[:MODIFIER+MODIFIER...]`. Each task entry says which modifiers it knows:
frame modifiers change the FrameSpec; any other modifier is handed to the task's constructor
(e.g. a scoring mode). For 4D-Bench QA, `4dbench-qa` is the official setting and `time-first`,
`timestamps`, `views-K` (K = 1..24 views spread evenly; views-3 is the official [1, 8, 16]) and
`frames-N` (N frames per view) change it: `4dbench-qa:time-first+timestamps`.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from vidbench.benchmarks.autoeval_video import task as autoeval_video
from vidbench.benchmarks.mmworld import variants as mmworld_variants
from vidbench.core.errors import ConfigError
from vidbench.core.requests import GenerationConfig
from vidbench.media.spec import OFFICIAL_4D_VIEWS, FrameSpec, views_evenly
from vidbench.tasks.base import Task

# The 4D-Bench robustness study (Table 3) and ablations (Fig. 6), listed for `vidbench tasks`.
FOURD_VARIANTS = ("time-first", "timestamps", "views-K", "frames-N")
# What the placeholders of variant families stand for, for `vidbench tasks` and errors.
VARIANT_FAMILIES = {
    "views-K": "K = 1..24 views spread evenly over the ring (views-3: the official 1, 8, 16)",
    "frames-N": "N >= 1 frames per view",
    "shuffled-SEED": "the sampled frames in a seeded random order",
    "grid-RxC": "frames tiled into one R x C image (-square: padded to a square)",
}


def fourd_frame_modifier(spec: FrameSpec, modifier: str) -> FrameSpec | None:
    """The FrameSpec a 4D-Bench modifier asks for, or None when it is not a frame modifier."""
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
    return None


# make(full name, FrameSpec, the modifiers that were not frame modifiers) -> Task.
# A constructor raises ConfigError for modifiers it does not know.
TaskFactory = Callable[[str, FrameSpec, list[str]], Task]


@dataclass(frozen=True)
class TaskEntry:
    make: TaskFactory
    spec: FrameSpec  # the task's default (official) frames
    frame_modifier: Callable[[FrameSpec, str], FrameSpec | None]
    variants: tuple[str, ...]  # named variants, for `vidbench tasks` and error messages


def no_other_modifiers(name: str, modifiers: list[str], known: tuple[str, ...]) -> None:
    if modifiers:
        raise ConfigError(
            f"{name}: unknown task variant {modifiers[0]!r}; known: {', '.join(known)}"
        )


def _fourd_qa(name: str, spec: FrameSpec, modifiers: list[str]) -> Task:
    from vidbench.benchmarks.fourd.qa_task import FourDQA

    no_other_modifiers(name, modifiers, FOURD_VARIANTS)
    return FourDQA(name, spec, GenerationConfig(temperature=0.0, max_tokens=128))


def _fourd_caption(name: str, spec: FrameSpec, modifiers: list[str]) -> Task:
    from vidbench.benchmarks.fourd.caption_task import make

    return make(name, spec, modifiers)


# 4D-Bench's input for both tasks: views [1, 8, 16], six frames each (PROTOCOLS.md).
FOURD_SPEC = FrameSpec(views=OFFICIAL_4D_VIEWS, frames=6, sampler="interval")

TASKS: dict[str, TaskEntry] = {
    "4dbench-qa": TaskEntry(_fourd_qa, FOURD_SPEC, fourd_frame_modifier, FOURD_VARIANTS),
    # 4D-Bench captioning (Table 2): the QA task's frames and frame variants, plus the scoring
    # protocol (vidbench by default, official, coco), e.g. 4dbench-caption:official+frames-3.
    "4dbench-caption": TaskEntry(
        _fourd_caption, FOURD_SPEC, fourd_frame_modifier, (*FOURD_VARIANTS, "official", "coco")
    ),
    # AutoEval-Video (papers/004): frames-8/16, grid-1x8/4x4/2x4-square/4x4-square, and the
    # judge protocol (robust by default, or official), e.g. autoeval-video:frames-16+grid-4x4.
    "autoeval-video": TaskEntry(
        autoeval_video.make,
        autoeval_video.DEFAULT_SPEC,
        autoeval_video.frame_modifier,
        autoeval_video.VARIANTS,
    ),
    # MMWorld (papers/003): keyframes, frames-N, shuffled, reduced (appendix B.5), scoring
    # rule | judge-all | judge-fallback, official, api-prompt, subtitles, judge-processed;
    # e.g. mmworld:keyframes+frames-10+api-prompt, mmworld-synth-audio:subtitles+rule.
    **{
        name: TaskEntry(
            mmworld_variants.make,
            mmworld_variants.DEFAULT_SPEC,
            mmworld_variants.frame_modifier,
            mmworld_variants.VARIANTS,
        )
        for name in mmworld_variants.SUBSET_OF_TASK
    },
}


def get_task(name: str, generation: dict[str, Any] | None = None, **overrides: object) -> Task:
    """The task a name denotes, with FrameSpec fields and generation settings overridden
    (None values are ignored)."""
    base, _, modifier_text = name.partition(":")
    if base not in TASKS:
        raise ConfigError(f"unknown task {base!r}; known: {', '.join(TASKS)}")
    entry = TASKS[base]
    spec, others = entry.spec, []
    for modifier in filter(None, modifier_text.split("+")):
        changed = entry.frame_modifier(spec, modifier)
        if changed is None:
            others.append(modifier)
        else:
            spec = changed
    spec = spec.with_(**overrides)
    task = entry.make(name, spec, others)
    if generation:
        unknown = set(generation) - set(task.generation.as_dict())
        if unknown:
            raise ConfigError(f"unknown generation settings {sorted(unknown)}")
        changes = {k: v for k, v in generation.items() if v is not None}
        task.generation = dataclasses.replace(task.generation, **changes)
    return task
