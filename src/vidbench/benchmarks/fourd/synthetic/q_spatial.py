"""Spatial Relationship questions, judged in the first video's projection at stated moments:
the scene's ``first_view`` camera, by default the 2D renderer's front camera (render.FRONT_VIEW)."""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from vidbench.benchmarks.fourd.synthetic.drafting import (
    Draft,
    NoQuestion,
    choose_template,
    part_options,
    pick,
)
from vidbench.benchmarks.fourd.synthetic.evidence import END, START, WHOLE, seen
from vidbench.benchmarks.fourd.synthetic.render import project
from vidbench.benchmarks.fourd.synthetic.scene import (
    Part,
    Scene,
    ScreenProjection,
    label,
    present,
    state_at,
)

TRUE_MARGIN = 0.35  # a relation holds when it holds by at least this much (screen units)...
FALSE_MARGIN = 0.08  # ...and is false when the other way round, level or nearly level
GRID = np.linspace(0.0, 1.0, 1001)  # fine enough that "throughout" holds between grid points
MOMENTS: dict[str, np.ndarray] = {  # moment -> indices into GRID
    "at the start of the video": np.array([0]),
    "at the end of the video": np.array([len(GRID) - 1]),
    "throughout the video": np.arange(len(GRID)),
}
WINDOWS = {  # moment -> the scene times that show it
    "at the start of the video": START,
    "at the end of the video": END,
    "throughout the video": WHOLE,
}


class Direction(NamedTuple):
    """Where one part is from another (or from all the others) in the front view."""

    axis: int  # 0 = screen x, 1 = screen y, 2 = depth
    sign: int  # "A is <relation> B" where sign * (A - B) along the axis is large enough
    opposite: str
    relation: str  # "A is <relation>" of a pair
    extreme: str  # "which shape is <extreme>" of all


DIRECTIONS: dict[str, Direction] = {
    "left": Direction(0, -1, "right", "to the left of {b}", "furthest to the left"),
    "right": Direction(0, 1, "left", "to the right of {b}", "furthest to the right"),
    "above": Direction(1, 1, "below", "above {b}", "highest"),
    "below": Direction(1, -1, "above", "below {b}", "lowest"),
    "front": Direction(2, 1, "behind", "in front of {b}", "closest to the first video's camera"),
    "behind": Direction(2, -1, "front", "behind {b}", "furthest from the first video's camera"),
}


def _screen(view: ScreenProjection | None, pos: tuple[float, float, float]) -> tuple:
    return project(pos, 0.0)[:3] if view is None else view.screen(pos)


@functools.lru_cache(maxsize=256)
def front_track(part: Part, view: ScreenProjection | None = None) -> tuple[np.ndarray, np.ndarray]:
    """First-view (screen x, screen y, depth) of a part's centre over GRID, and its presence."""
    coords = np.array([_screen(view, state_at(part, float(t)).pos) for t in GRID])
    alive = np.array([present(part, float(t)) for t in GRID])
    coords.flags.writeable = alive.flags.writeable = False  # cached: keep it read-only
    return coords, alive


def relation_truth(
    a: Part, b: Part, idx: np.ndarray, view: ScreenProjection | None = None
) -> dict[str, bool | None]:
    """For each relation "a is <rel> b": True, False, or None (too close to call) at GRID[idx]."""
    (ca, pa), (cb, pb) = front_track(a, view), front_track(b, view)
    if not (pa[idx].all() and pb[idx].all()):
        raise NoQuestion("a part is absent at the stated moment")
    diff = ca[idx] - cb[idx]
    out: dict[str, bool | None] = {}
    for rel, direction in DIRECTIONS.items():
        values = direction.sign * diff[:, direction.axis]
        out[rel] = (
            True
            if values.min() >= TRUE_MARGIN
            else (False if values.max() <= FALSE_MARGIN else None)
        )
    return out


def spatial_question(scene: Scene, rng: np.random.Generator) -> Draft:
    """A question about where parts are relative to each other in the front view."""
    parts = list(scene.parts)
    view = scene.first_view

    def pair() -> Draft:
        combos = []
        for moment, idx in MOMENTS.items():
            for a in parts:
                for b in parts:
                    if a is b:
                        continue
                    try:
                        truth = relation_truth(a, b, idx, view)
                    except NoQuestion:
                        continue
                    if (
                        any(v is True for v in truth.values())
                        and sum(v is False for v in truth.values()) >= 3
                    ):
                        combos.append((moment, a, b, truth))
        if not combos:
            raise NoQuestion("no clear pair relation")
        ((moment, a, b, truth),) = pick(rng, combos)
        (rel,) = pick(rng, [r for r, v in truth.items() if v is True])
        false = [r for r, v in truth.items() if v is False]
        opposite = DIRECTIONS[rel].opposite
        wrong = pick(rng, false, [3.0 if r == opposite else 1.0 for r in false], k=3)
        word = {r: d.relation.format(b=label(b)) for r, d in DIRECTIONS.items()}
        q = f"As seen in the first video, where is {label(a)} relative to {label(b)} {moment}?"
        found = tuple(seen(p, "pair", WINDOWS[moment], first_view=True) for p in (a, b))
        return Draft(q, word[rel], tuple(word[r] for r in wrong), evidence=found)

    def extreme() -> Draft:
        tracks = [front_track(p, view) for p in parts]
        extremes = []
        for moment, idx in MOMENTS.items():
            for key, direction in DIRECTIONS.items():
                axis, sign = direction.axis, direction.sign
                for i, g in enumerate(parts):
                    cg, pg = tracks[i]
                    if not pg[idx].all():
                        continue
                    ok = True
                    for j, (cq, pq) in enumerate(tracks):
                        live = idx[pq[idx]]
                        if (
                            j != i
                            and live.size
                            and (sign * (cg[live, axis] - cq[live, axis])).min() < TRUE_MARGIN
                        ):
                            ok = False
                    if ok:
                        extremes.append((moment, key, g))
        if not extremes:
            raise NoQuestion("no clear extreme")
        ((moment, key, g),) = pick(rng, extremes)
        gold, wrong = part_options(scene, rng, g, parts)
        q = f"As seen in the first video, which shape is {DIRECTIONS[key].extreme} {moment}?"
        found = (seen(g, "subject", WINDOWS[moment], first_view=True),)
        return Draft(q, gold, wrong, evidence=found)

    def hidden() -> Draft:
        if scene.occlusion is None:
            raise NoQuestion("no occlusion")
        occ, hid = (parts[i] for i in scene.occlusion)
        moment = {
            "appear": "at the end of the video",
            "disappear": "at the start of the video",
        }.get(hid.behaviour.kind, "throughout the video")
        for t in GRID[MOMENTS[moment]]:
            t = float(t)
            if not (present(hid, t) and present(occ, t)):
                raise NoQuestion("hidden part absent")
            for other in parts:
                if (
                    other is not occ
                    and present(other, t)
                    and (other is hid) != covered(occ, other, t)
                ):
                    raise NoQuestion("occlusion not as built")
        gold, wrong = part_options(scene, rng, hid, parts)
        q = f"In the first video, which shape is completely hidden behind {label(occ)} {moment}?"
        found = (
            seen(occ, "occluder", WINDOWS[moment], first_view=True),
            seen(hid, "hidden part", WINDOWS[moment]),
        )
        return Draft(q, gold, wrong, evidence=found)

    templates: list[tuple[float, Callable[[], Draft]]] = [
        (3.0, pair),
        (2.0, extreme),
        (3.0 if scene.occlusion else 0.0, hidden),
    ]
    return choose_template(rng, templates)


def covered(front: Part, back: Part, t: float) -> bool:
    """Whether ``back`` is entirely behind ``front`` (a cube) in the front view at time t."""
    sf, sb = state_at(front, t), state_at(back, t)
    xf, yf, df, kf = project(sf.pos, 0.0)
    xb, yb, db, kb = project(sb.pos, 0.0)
    half = 0.85 * sf.radius * kf  # the cube's drawn half side
    return db < df and max(abs(xb - xf), abs(yb - yf)) + sb.radius * kb <= half
