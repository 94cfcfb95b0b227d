"""Shared pieces of the question generators: drafts, weighted picks, part-label options."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from vidbench.benchmarks.fourd.synthetic.evidence import Evidence
from vidbench.benchmarks.fourd.synthetic.scene import COLOURS, SHAPES, Part, Scene, label

FRONT_NOTE = "Directions are as seen in the first video."


class NoQuestion(Exception):
    """A generator cannot ask a valid question about this scene."""


@dataclass(frozen=True)
class Draft:
    """A question with its true answer and three false answers (or a numeric answer), and what
    must be seen to answer it."""

    question: str
    gold: str = ""
    distractors: tuple[str, ...] = ()
    number: int | None = None  # counting: the options are four nearby numbers
    evidence: tuple[Evidence, ...] = ()


Generator = Callable[[Scene, np.random.Generator], Draft]


def pick(
    rng: np.random.Generator,
    items: Sequence[object],
    weights: Sequence[float] | None = None,
    k: int = 1,
) -> list:
    """k distinct items drawn without replacement, proportionally to ``weights``."""
    if len(items) < k:
        raise NoQuestion(f"need {k} choices, have {len(items)}")
    if k == 0:
        return []
    w = np.ones(len(items)) if weights is None else np.asarray(weights, dtype=float)
    idx = rng.choice(len(items), size=k, replace=False, p=w / w.sum())
    return [items[int(i)] for i in idx]


def choose_template(
    rng: np.random.Generator, options: list[tuple[float, Callable[[], Draft]]]
) -> Draft:
    """Try templates in a weighted random order; the first that yields a draft wins."""
    pending = [o for o in options if o[0] > 0]
    while pending:
        ((w, make),) = pick(rng, pending, [o[0] for o in pending])
        pending.remove((w, make))
        try:
            return make()
        except NoQuestion:
            continue
    raise NoQuestion("no template applies")


def fake_labels(scene: Scene, rng: np.random.Generator, k: int) -> list[str]:
    """Labels of parts the scene does not contain ("the pink cone")."""
    taken = {(p.colour, p.shape) for p in scene.parts}
    taken |= {(c, p.shape) for p in scene.parts if (c := p.behaviour.new_colour) is not None}
    pool = [f"the {c} {s}" for c in COLOURS for s in SHAPES if (c, s) not in taken]
    return [str(x) for x in pick(rng, pool, k=k)]


def part_options(
    scene: Scene, rng: np.random.Generator, gold: Part, others: Sequence[Part]
) -> tuple[str, tuple[str, ...]]:
    """Gold label plus three false labels: other real parts first, then absent ones."""
    wrong = [label(p) for p in others if p is not gold]
    wrong = pick(rng, wrong, k=min(3, len(wrong)))
    wrong += fake_labels(scene, rng, 3 - len(wrong))
    return label(gold), tuple(wrong)
