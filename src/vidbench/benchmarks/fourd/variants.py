"""4D-Bench task names: `4dbench-qa` and `4dbench-caption`, and the variants of both.

`4dbench-qa` is the official setting (views 1, 8 and 16, six frames each, interval sampling);
`time-first`, `timestamps`, `views-K` (K = 1..24 views spread evenly; views-3 is the official
[1, 8, 16]) and `frames-N` (N frames per view) change it, as the paper's robustness study
(Table 3) and ablations (Fig. 6) do: `4dbench-qa:time-first+timestamps`. `4dbench-caption` takes
the same frame variants plus a scoring protocol (`official`, `coco`; vidbench's by default).
"""

from __future__ import annotations

from vidbench.benchmarks.fourd.loader import VIEWS_PER_OBJECT
from vidbench.core.requests import GenerationConfig
from vidbench.media.spec import FrameSpec, views_evenly
from vidbench.tasks.base import Task
from vidbench.tasks.registry import TaskEntry, TaskRequest, no_other_modifiers

OFFICIAL_VIEWS: tuple[int, ...] = (1, 8, 16)
# The official input of both tasks: views [1, 8, 16], six frames each, interval sampling.
SPEC = FrameSpec(views=OFFICIAL_VIEWS, frames=6, sampler="interval")
FRAME_VARIANTS = ("time-first", "timestamps", "views-K", "frames-N")
CAPTION_PROTOCOLS = ("official", "coco", "given")  # scoring variants (given: captions from a file)
VARIANT_FAMILIES = {
    "views-K": "K = 1..24 views spread evenly over the ring (views-3: the official 1, 8, 16)",
    "frames-N": "N >= 1 frames per view",
}


def frame_modifier(spec: FrameSpec, modifier: str) -> FrameSpec | None:
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
        return spec.with_(views=OFFICIAL_VIEWS if n == 3 else views_evenly(n, VIEWS_PER_OBJECT))
    return None


def _qa(request: TaskRequest) -> Task:
    from vidbench.benchmarks.fourd.qa_task import FourDQA

    no_other_modifiers(request, FRAME_VARIANTS)
    return FourDQA(request.name, request.spec, GenerationConfig(temperature=0.0, max_tokens=128))


def _caption(request: TaskRequest) -> Task:
    from vidbench.benchmarks.fourd.caption_task import make

    return make(request)


TASKS: dict[str, TaskEntry] = {
    "4dbench-qa": TaskEntry(_qa, SPEC, frame_modifier, FRAME_VARIANTS),
    # e.g. 4dbench-caption:official+frames-3
    "4dbench-caption": TaskEntry(
        _caption, SPEC, frame_modifier, (*FRAME_VARIANTS, *CAPTION_PROTOCOLS)
    ),
}
