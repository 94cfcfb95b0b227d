"""Random (seeded) sampling of scenes, and deterministic uids."""

from __future__ import annotations

import hashlib
import math

import numpy as np

from vidbench.benchmarks.fourd.synthetic.render import CAMERA_DISTANCE, HALF_EXTENT
from vidbench.benchmarks.fourd.synthetic.scene import (
    COLOURS,
    DIRECTIONS,
    SHAPES,
    SLOTS,
    Behaviour,
    Part,
    Scene,
    state_at,
)

FRAME_MARGIN = 0.95  # parts stay inside this fraction of the half image, in every view
# Behaviour kinds of moving parts and their weights.
_KIND_WEIGHTS: dict[str, float] = {
    "move": 0.30,
    "orbit": 0.09,
    "jump": 0.14,
    "grow": 0.08,
    "shrink": 0.08,
    "recolour": 0.11,
    "appear": 0.10,
    "disappear": 0.10,
}


def make_uid(seed: int, index: int) -> str:
    """32 lowercase hex characters derived from (seed, object index)."""
    return hashlib.md5(f"vidbench-synthetic4d:{seed}:{index}".encode()).hexdigest()


def fits(part: Part) -> bool:
    """Whether the part stays inside the image in every view for the whole video."""
    limit = FRAME_MARGIN * HALF_EXTENT
    for t in np.linspace(0.0, 1.0, 41):
        st = state_at(part, float(t))
        h = math.hypot(st.pos[0], st.pos[2])
        scale = CAMERA_DISTANCE / (CAMERA_DISTANCE - h)  # the nearest any camera sees it
        if (h + st.radius) * scale > limit or (abs(st.pos[1]) + st.radius) * scale > limit:
            return False
    return True


def behaviour_variants(
    kind: str, pos: tuple[float, float, float], slot: int | None, new_colour: str | None
) -> list[Behaviour]:
    """Candidate behaviours of a kind (one per direction for "move")."""
    if kind == "move":
        return [Behaviour("move", slot, direction=d) for d in DIRECTIONS]
    if kind == "orbit" and math.hypot(pos[0], pos[2]) < 0.6:
        return []  # too near the axis to be seen circling
    return [Behaviour(kind, slot, new_colour=new_colour if kind == "recolour" else None)]


def separated(pos: tuple[float, float, float], r: float, placed: list[Part]) -> bool:
    return all(math.dist(pos, q.pos) >= r + q.radius + 0.3 for q in placed)


def event_slots(rng: np.random.Generator, m: int) -> list[int]:
    """Time slots for m moving parts: distinct while possible, then repeats."""
    order = [int(s) for s in rng.permutation(len(SLOTS))]
    return [order[i % len(SLOTS)] for i in range(m)]


def _pick(rng: np.random.Generator, items: list[str]) -> str:
    return items[int(rng.integers(len(items)))]


def sample_scene(seed: int, index: int, attempt: int = 0) -> Scene:
    """Sample the scene of object ``index`` for ``seed`` (``attempt`` > 0 gives a fresh draw)."""
    rng = np.random.default_rng([seed, index, attempt, 0x4D])
    for _ in range(1000):
        scene = _try_scene(rng, make_uid(seed, index))
        if scene is not None:
            return scene
    raise RuntimeError(f"could not sample a scene for seed={seed} index={index}")


def _try_scene(rng: np.random.Generator, uid: str) -> Scene | None:
    n = int(rng.choice([2, 3, 4, 5], p=[0.15, 0.35, 0.3, 0.2]))
    names = [str(c) for c in rng.permutation(list(COLOURS))]
    colours, spare = names[:n], names[n:]
    shapes = [str(s) for s in rng.choice(SHAPES, size=n)]
    kinds_list, weights = list(_KIND_WEIGHTS), np.array(list(_KIND_WEIGHTS.values()))
    moving = int(rng.integers(2, n + 1))
    kinds = [str(k) for k in rng.choice(kinds_list, size=moving, p=weights / weights.sum())]
    kinds += ["still"] * (n - moving)
    kinds = [kinds[i] for i in rng.permutation(n)]
    occlusion: tuple[int, int] | None = None
    if n >= 3 and rng.random() < 0.4:
        occ, hid = (int(i) for i in rng.choice(n, size=2, replace=False))
        kinds[occ] = _pick(rng, ["still", "still", "recolour"])
        kinds[hid] = _pick(rng, ["still", "recolour", "appear", "disappear"])
        shapes[occ] = "cube"
        occlusion = (occ, hid)
    slots = iter(event_slots(rng, sum(k != "still" for k in kinds)))
    slot_of = [next(slots) if k != "still" else None for k in kinds]
    if len({s for s in slot_of if s is not None}) < 2 or kinds.count("recolour") > len(spare):
        return None

    positions: list[tuple[float, float, float] | None] = [None] * n
    radii = [float(rng.uniform(0.3, 0.45)) for _ in range(n)]
    if occlusion is not None:
        occ, hid = occlusion
        x, y, z = rng.uniform(-0.6, 0.6), rng.uniform(-0.5, 0.4), rng.uniform(0.3, 0.8)
        radii[occ] = float(rng.uniform(0.45, 0.52))
        radii[hid] = 0.5 * radii[occ]
        positions[occ] = (float(x), float(y), float(z))
        k = (CAMERA_DISTANCE - (z - 1.0)) / (CAMERA_DISTANCE - z)  # on the front camera's ray
        positions[hid] = (float(x * k), float(y * k), float(z - 1.0))
    parts: list[Part | None] = [None] * n
    placed: list[Part] = []
    new_colours = iter(spare)
    order = [i for i in range(n) if positions[i] is not None] + [
        i for i in range(n) if positions[i] is None
    ]
    for i in order:
        new_colour = next(new_colours) if kinds[i] == "recolour" else None
        for _ in range(200):
            pos = positions[i]
            if pos is None:
                a, rad = rng.uniform(0, 2 * math.pi), 1.1 * math.sqrt(rng.uniform())
                pos = (
                    float(rad * math.sin(a)),
                    float(rng.uniform(-0.7, 0.7)),
                    float(rad * math.cos(a)),
                )
                if not separated(pos, radii[i], placed):
                    continue
            cands = [
                Part(shapes[i], colours[i], pos, radii[i], b)
                for b in behaviour_variants(kinds[i], pos, slot_of[i], new_colour)
            ]
            cands = [c for c in cands if fits(c)]
            if not cands:
                if positions[i] is not None:
                    return None
                continue
            part = parts[i] = cands[int(rng.integers(len(cands)))]
            placed.append(part)
            break
        else:
            return None
    return Scene(uid, tuple(p for p in parts if p is not None), occlusion)
