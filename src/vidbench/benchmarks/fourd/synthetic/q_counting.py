"""Object Counting questions: counts that need care (appearing/disappearing or hidden parts)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from vidbench.benchmarks.fourd.synthetic.drafting import Draft, NoQuestion, choose_template, pick
from vidbench.benchmarks.fourd.synthetic.evidence import END, START, WHOLE, Evidence, events, seen
from vidbench.benchmarks.fourd.synthetic.phrases import plural
from vidbench.benchmarks.fourd.synthetic.scene import Part, Scene, present

ALL_VIEWS = "Count across all views, including shapes hidden behind others in some views."


def _count(parts: list[Part], keep: Callable[[Part], bool]) -> int:
    return sum(1 for p in parts if keep(p))


def _counted(
    parts: list[Part], keep: Callable[[Part], bool], window: tuple[float, float] = WHOLE
) -> tuple[Evidence, ...]:
    """Evidence: every counted part seen (at the stated moment)."""
    return tuple(seen(p, "counted part", window) for p in parts if keep(p))


def counting_question(scene: Scene, rng: np.random.Generator) -> Draft:
    """A "How many ..." question whose answer is counted from the scene description."""
    parts = list(scene.parts)
    pops = [p for p in parts if p.behaviour.kind in ("appear", "disappear")]
    hidden = scene.occlusion is not None

    def total() -> Draft:
        q = pick(
            rng,
            [
                "How many shapes make up this object in total, counting every shape that is "
                "present at any time in any view?",
                "How many separate shapes can be seen at some point in the video, in any view?",
            ],
        )[0]
        return Draft(str(q), number=len(parts), evidence=_counted(parts, lambda p: True))

    def at(moment: str, t: float) -> Callable[[], Draft]:
        def make() -> Draft:
            n = _count(parts, lambda p: present(p, t))
            found = _counted(parts, lambda p: present(p, t), START if t == 0.0 else END)
            q = f"How many shapes are present {moment}? {ALL_VIEWS}"
            return Draft(q, number=n, evidence=found)

        return make

    def by_shape(when: str) -> Draft:
        shapes = sorted({p.shape for p in parts})
        weights = [
            1.0
            + 2.0 * sum(1 for p in parts if p.shape == s)
            + 3.0 * sum(1 for p in pops if p.shape == s)
            for s in shapes
        ]
        (shape,) = pick(rng, shapes, weights)
        if when == "any":
            n = _count(parts, lambda p: p.shape == shape)
            found = _counted(parts, lambda p: p.shape == shape)
            q = (
                f"How many {plural(shape)} are there in total, counting every {shape} that is "
                "present at any time in any view?"
            )
        else:
            t = 0.0 if when == "start" else 1.0
            if not any(p.shape == shape for p in pops):
                raise NoQuestion("count of this shape does not change")
            n = _count(parts, lambda p: p.shape == shape and present(p, t))
            found = _counted(
                parts, lambda p: p.shape == shape and present(p, t), START if t == 0.0 else END
            )
            q = f"How many {plural(shape)} are there at the {when} of the video? {ALL_VIEWS}"
        return Draft(q, number=n, evidence=found)

    def moving() -> Draft:
        movers = [p for p in parts if p.behaviour.kind in ("move", "orbit", "jump")]
        return Draft(
            "How many shapes change their position at some point during the video?",
            number=len(movers),
            evidence=events(movers, "counted part"),
        )

    templates: list[tuple[float, Callable[[], Draft]]] = [
        (3.0 if hidden else 1.0, total),
        (3.0 if pops else 0.3, at("at the end of the video", 1.0)),
        (2.0 if pops else 0.3, at("at the start of the video", 0.0)),
        (2.0 if hidden else 1.5, lambda: by_shape("any")),
        (2.0 if pops else 0.0, lambda: by_shape("end")),
        (1.0 if pops else 0.0, lambda: by_shape("start")),
        (1.0, moving),
    ]
    return choose_template(rng, templates)
