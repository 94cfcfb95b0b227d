"""Appearance questions: the colour or the shape of a part."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from vidbench.benchmarks.fourd.synthetic.drafting import Draft, NoQuestion, choose_template, pick
from vidbench.benchmarks.fourd.synthetic.evidence import END, START, event, seen
from vidbench.benchmarks.fourd.synthetic.phrases import action_phrase, behaviour_key
from vidbench.benchmarks.fourd.synthetic.scene import COLOURS, SHAPES, Scene


def _colour_options(
    scene: Scene, rng: np.random.Generator, gold: str, also: tuple[str, ...] = ()
) -> tuple[str, ...]:
    """Three colours other than ``gold``: ``also`` first, then the scene's, then any."""
    seen = {p.colour for p in scene.parts} | {
        p.behaviour.new_colour for p in scene.parts if p.behaviour.new_colour
    }
    out = [c for c in dict.fromkeys(also) if c != gold][:3]
    pool = [c for c in COLOURS if c != gold and c not in out]
    weights = [3.0 if c in seen else 1.0 for c in pool]
    out += [str(c) for c in pick(rng, pool, weights, k=3 - len(out))]
    return tuple(out)


def appearance_question(scene: Scene, rng: np.random.Generator) -> Draft:
    """A question about a part's colour or shape."""
    parts = list(scene.parts)
    shape_count = {s: sum(p.shape == s for p in parts) for s in SHAPES}

    def colour_of_shape() -> Draft:
        unique = [p for p in parts if shape_count[p.shape] == 1 and p.behaviour.kind != "recolour"]
        if not unique:
            raise NoQuestion("no shape occurs once")
        (p,) = pick(rng, unique)
        q = pick(
            rng,
            [
                f"What colour is the {p.shape}?",
                f"What is the colour of the {p.shape} in this object?",
            ],
        )[0]
        colours = _colour_options(scene, rng, p.colour)
        return Draft(str(q), p.colour, colours, evidence=(seen(p, "subject"),))

    def shape_of_colour() -> Draft:
        colour_count = {c: sum(q.colour == c for q in parts) for c in COLOURS}
        (p,) = pick(rng, [q for q in parts if colour_count[q.colour] == 1])
        q = (
            f"Which shape is {p.colour} at the start of the video?"
            if p.behaviour.kind == "recolour"
            else pick(
                rng,
                [
                    f"Which shape is {p.colour}?",
                    f"What shape is the {p.colour} part of the object?",
                ],
            )[0]
        )
        wrong = tuple(f"a {s}" for s in SHAPES if s != p.shape)
        found = seen(p, "subject", START if p.behaviour.kind == "recolour" else (0.0, 1.0))
        return Draft(str(q), f"a {p.shape}", wrong, evidence=(found,))

    def colour_at_end() -> Draft:
        changing = [p for p in parts if p.behaviour.kind == "recolour"]
        if not changing:
            raise NoQuestion("nothing changes colour")
        (p,) = pick(rng, changing)
        new = str(p.behaviour.new_colour)
        q = (
            f"The {p.shape} that is {p.colour} at the start changes colour. "
            "What colour is it at the end of the video?"
        )
        colours = _colour_options(scene, rng, new, also=(p.colour,))
        return Draft(q, new, colours, evidence=(seen(p, "subject", END),))

    def colour_of_doer() -> Draft:
        keys = [behaviour_key(p.behaviour) for p in parts]
        doers = [
            p
            for p, k in zip(parts, keys, strict=True)
            if keys.count(k) == 1 and p.behaviour.kind not in ("still", "recolour")
        ]
        if not doers:
            raise NoQuestion("no part with a unique behaviour")
        (p,) = pick(rng, doers)
        note = " (as seen in the first video)" if p.behaviour.kind == "move" else ""
        q = f"What colour is the shape that {action_phrase(p.behaviour)}{note}?"
        colours = _colour_options(scene, rng, p.colour)
        return Draft(q, p.colour, colours, evidence=event(p, "subject"))

    templates: list[tuple[float, Callable[[], Draft]]] = [
        (2.0, colour_of_shape),
        (2.0, shape_of_colour),
        (3.0 if any(p.behaviour.kind == "recolour" for p in parts) else 0.0, colour_at_end),
        (1.5, colour_of_doer),
    ]
    return choose_template(rng, templates)
