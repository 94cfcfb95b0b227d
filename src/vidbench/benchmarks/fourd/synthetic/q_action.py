"""Action questions: what a given part does, or which part does a given thing."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from vidbench.benchmarks.fourd.synthetic.drafting import (
    FRONT_NOTE,
    Draft,
    NoQuestion,
    choose_template,
    part_options,
    pick,
)
from vidbench.benchmarks.fourd.synthetic.evidence import event
from vidbench.benchmarks.fourd.synthetic.phrases import action_phrase, behaviour_key, lookalikes
from vidbench.benchmarks.fourd.synthetic.scene import Part, Scene, label


def behaviour_draft(
    question: str, part: Part, rng: np.random.Generator, allow_still: bool = True
) -> Draft:
    """Draft asking what ``part`` does: its behaviour against three look-alike behaviours."""
    cands = [(b, w) for b, w in lookalikes(part) if allow_still or b.kind != "still"]
    wrong = pick(rng, [b for b, _ in cands], [w for _, w in cands], k=3)
    gold = action_phrase(part.behaviour)
    texts = (gold, *(action_phrase(b) for b in wrong))
    moves = any(t.startswith("moves") for t in texts)
    q = f"{question} {FRONT_NOTE}" if moves else question
    return Draft(q, gold, texts[1:], evidence=event(part, "subject"))


def action_question(scene: Scene, rng: np.random.Generator) -> Draft:
    """A question about a part's motion or change."""
    parts = list(scene.parts)
    active = [p for p in parts if p.behaviour.kind != "still"]

    def what_does() -> Draft:
        (p,) = pick(rng, parts, [4.0 if p in active else 1.0 for p in parts])
        q = pick(
            rng,
            [
                f"What does {label(p)} do during the video?",
                f"Which best describes what happens to {label(p)}?",
                f"How does {label(p)} behave over the course of the video?",
            ],
        )[0]
        return behaviour_draft(str(q), p, rng)

    def who_does() -> Draft:
        keys = [behaviour_key(p.behaviour) for p in parts]
        unique = [
            p
            for p, k in zip(parts, keys, strict=True)
            if keys.count(k) == 1 and p.behaviour.kind != "still"
        ]
        if not unique:
            raise NoQuestion("no unique behaviour")
        (p,) = pick(rng, unique)
        phrase = action_phrase(p.behaviour)
        note = f" {FRONT_NOTE}" if p.behaviour.kind == "move" else ""
        gold, wrong = part_options(scene, rng, p, parts)
        return Draft(f"Which shape {phrase}?{note}", gold, wrong, evidence=event(p, "subject"))

    templates: list[tuple[float, Callable[[], Draft]]] = [(3.0, what_does), (1.0, who_does)]
    return choose_template(rng, templates)
