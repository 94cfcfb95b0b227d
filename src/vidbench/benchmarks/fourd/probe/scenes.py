"""Probe objects: procedural scenes (synthetic/scene.py) built to a set of knob values.

Each object has one counted class, a colour and a shape ("red cubes"), with 1..4 identical,
still members; the rest of its parts have a colour and shape of their own:

- occluders: still cubes (cylinders when cubes are counted) placed on the line from a counted
  part to one of the input cameras, just in front of it (the k-th occluder covers counted part
  k mod T, each from another input view);
- look-alikes: the counted shape in another colour, then the counted colour on another shape,
  in turn;
- fillers: any other colour and shape.

Look-alikes and fillers move or change (moves, orbits, jumps, size and colour changes, appearing,
disappearing) in the event slots of scene.py, with the knobs' motion size and speed. Every part
stays inside the image of every rendered camera for the whole video.
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, replace

import numpy as np

from vidbench.benchmarks.fourd.probe.camera import (
    TAN_HALF_FOV,
    ProbeCamera,
    probe_ring,
    towards,
    vec3,
)
from vidbench.benchmarks.fourd.probe.knobs import MAX_COUNTED, ObjectKnobs
from vidbench.benchmarks.fourd.synthetic.sample import behaviour_variants, event_slots, separated
from vidbench.benchmarks.fourd.synthetic.scene import (
    COLOURS,
    SHAPES,
    Behaviour,
    Part,
    Scene,
    state_at,
)
from vidbench.benchmarks.fourd.variants import SPEC, frame_modifier
from vidbench.core.errors import ConfigError

FRAME_MARGIN = 0.92  # parts stay inside this fraction of the half image
EXTENT = 1.5  # a part reaches at most this x its radius from its centre (a cube's corner: 1.47)
OCCLUDER_SIZE = 1.4  # x the covered part's radius
GAP = 1.2  # occluder centre from the covered part's, x the sum of their radii
REACH = 1.1  # parts start within this distance of the vertical axis...
OCCLUDED_REACH = 0.8  # ...counted parts within this when occluders must fit in front of them
MOVING_KINDS: dict[str, float] = {  # behaviours of look-alikes and fillers, and their weights
    "move": 0.30,
    "orbit": 0.08,
    "jump": 0.16,
    "grow": 0.09,
    "shrink": 0.09,
    "recolour": 0.10,
    "appear": 0.09,
    "disappear": 0.09,
}
ROLES = ("counted", "occluder", "lookalike", "filler")


def input_views(count: int) -> tuple[int, ...]:
    """The view ids of a K-view input, as the `views-K` task variant picks them."""
    spec = frame_modifier(SPEC, f"views-{count}")
    assert spec is not None
    return spec.views


@dataclass(frozen=True)
class ProbeObject:
    """One object of the probe: its scene (``first_view``: the first input camera), each part's
    role, the counted class, the cameras of the whole ring and the views it renders."""

    index: int
    knobs: ObjectKnobs
    scene: Scene
    roles: tuple[str, ...]
    counted: tuple[str, str]  # (colour, shape)
    cameras: tuple[ProbeCamera, ...]  # all 24 views
    views: tuple[int, ...]  # the views rendered (the input views, or all 24)

    @property
    def inputs(self) -> tuple[int, ...]:
        return input_views(self.knobs.input_views)


def probe_uid(seed: int, index: int, knobs: ObjectKnobs) -> str:
    """32 hex characters from (seed, index, knob values): a new seed or knob, a new object."""
    key = json.dumps([seed, index, knobs.to_json()], sort_keys=True)
    return hashlib.md5(f"vidbench-probe4d:{key}".encode()).hexdigest()


def fits(part: Part, cameras: list[ProbeCamera]) -> bool:
    """Whether the part stays inside every camera's image for the whole video."""
    for t in np.linspace(0.0, 1.0, 41):
        st = state_at(part, float(t))
        for camera in cameras:
            x, y, ahead = camera.ndc(st.pos)
            reach = EXTENT * st.radius / (ahead * TAN_HALF_FOV)
            if abs(x) + reach > FRAME_MARGIN or abs(y) + reach > FRAME_MARGIN:
                return False
    return True


def sample_object(
    seed: int, index: int, knobs: ObjectKnobs, all_views: bool = False, attempt: int = 0
) -> ProbeObject:
    """Object ``index`` of the probe for ``seed`` with these knob values (``attempt`` > 0: a
    fresh draw of the same uid and cameras)."""
    uid = probe_uid(seed, index, knobs)
    cameras = probe_ring(uid, seed, knobs.camera_jitter)
    inputs = input_views(knobs.input_views)
    views = tuple(range(len(cameras))) if all_views else inputs
    rendered = [cameras[v] for v in views]
    rng = np.random.default_rng([seed, index, attempt, 0x9B0BE])
    for _ in range(200):
        built = _try(rng, uid, knobs, cameras, inputs, rendered)
        if built is not None:
            parts, roles, counted = built
            scene = Scene(uid, parts, first_view=cameras[inputs[0]])
            return ProbeObject(index, knobs, scene, roles, counted, tuple(cameras), views)
    raise ConfigError(
        f"probe object {index} (seed {seed}): 200 draws found no room for {knobs.parts} parts "
        f"({knobs.occluders} occluders) inside every camera's image with motion size "
        f"{knobs.motion_size}; ask for fewer parts, occluders or a smaller motion"
    )


def _counted_total(rng: np.random.Generator, knobs: ObjectKnobs) -> int:
    room = knobs.parts - knobs.occluders - knobs.lookalikes
    most = min(MAX_COUNTED, room, max(1, knobs.parts - 2))  # two parts of their own if possible
    return int(rng.integers(1, max(1, most) + 1))


def _try(
    rng: np.random.Generator,
    uid: str,
    knobs: ObjectKnobs,
    cameras: list[ProbeCamera],
    inputs: tuple[int, ...],
    rendered: list[ProbeCamera],
) -> tuple[tuple[Part, ...], tuple[str, ...], tuple[str, str]] | None:
    counted_n = _counted_total(rng, knobs)
    colour, shape = str(rng.choice(list(COLOURS))), str(rng.choice(SHAPES))
    pool = [str(c) for c in rng.permutation([c for c in COLOURS if c != colour])]
    other_shapes = [str(s) for s in rng.permutation([s for s in SHAPES if s != shape])]
    occluder_shape = "cube" if shape != "cube" else "cylinder"
    looks: list[tuple[str, str]] = []
    for k in range(knobs.lookalikes):
        looks.append((pool.pop(), shape) if k % 2 == 0 else (colour, other_shapes[k // 2]))
    fill_n = knobs.parts - counted_n - knobs.occluders - knobs.lookalikes
    occluders = [(pool.pop(), occluder_shape) for _ in range(knobs.occluders)]
    fillers = [(pool.pop(), str(rng.choice(other_shapes))) for _ in range(fill_n)]
    spare = pool  # colours nobody has: what recolouring parts turn into

    placed: list[Part] = []
    counted: list[Part] = []
    reach = OCCLUDED_REACH if knobs.occluders else REACH  # room in front for the occluders
    for _ in range(counted_n):
        blank = Part(shape, colour, (0.0, 0.0, 0.0), _radius(rng))
        part = _place(rng, blank, placed, rendered, reach)
        if part is None:
            return None
        counted.append(part)
        placed.append(part)
    occluder_parts = _occluders(rng, occluders, counted, placed, cameras, inputs, rendered)
    if occluder_parts is None:
        return None
    placed += occluder_parts
    movers = looks + fillers
    kinds = _kinds(rng, len(movers), len(spare))
    slots = iter(event_slots(rng, sum(k != "still" for k in kinds)))
    new_colours = iter(spare)
    moving: list[Part] = []
    for (c, s), kind in zip(movers, kinds, strict=True):
        behaviour = Behaviour(
            kind,
            next(slots) if kind != "still" else None,
            new_colour=next(new_colours) if kind == "recolour" else None,
            amplitude=knobs.motion_size,
            speed=knobs.motion_speed,
        )
        part = _place(rng, Part(s, c, (0.0, 0.0, 0.0), _radius(rng), behaviour), placed, rendered)
        if part is None:
            return None
        moving.append(part)
        placed.append(part)
    roles = (
        ["counted"] * len(counted)
        + ["occluder"] * len(occluder_parts)
        + ["lookalike"] * len(looks)
        + ["filler"] * len(fillers)
    )
    order = [int(i) for i in rng.permutation(len(placed))]
    parts = [*counted, *occluder_parts, *moving]
    return tuple(parts[i] for i in order), tuple(roles[i] for i in order), (colour, shape)


def _radius(rng: np.random.Generator) -> float:
    return round(float(rng.uniform(0.3, 0.42)), 4)


def _kinds(rng: np.random.Generator, n: int, spare_colours: int) -> list[str]:
    """Behaviours of n look-alikes and fillers: two or more of them move or change (so that
    temporal questions have events), the others may stay still."""
    names = [k for k in MOVING_KINDS if k != "recolour" or spare_colours]
    weights = np.array([MOVING_KINDS[k] for k in names])
    active = n if n <= 2 else int(rng.integers(2, n + 1))
    kinds = [str(k) for k in rng.choice(names, size=active, p=weights / weights.sum())]
    while kinds.count("recolour") > spare_colours:
        kinds[kinds.index("recolour")] = "jump"
    kinds += ["still"] * (n - active)
    return [kinds[int(i)] for i in rng.permutation(n)]


def _place(
    rng: np.random.Generator,
    part: Part,
    placed: list[Part],
    cameras: list[ProbeCamera],
    reach: float = REACH,
) -> Part | None:
    """The part at a random free place within ``reach`` of the vertical axis (its behaviour's
    variants tried there: the directions of a move), inside every camera's image; None after
    200 tries."""
    for _ in range(200):
        a, rad = rng.uniform(0, 2 * math.pi), reach * math.sqrt(rng.uniform())
        pos = (
            round(float(rad * math.sin(a)), 4),
            round(float(rng.uniform(-0.6, 0.6)), 4),
            round(float(rad * math.cos(a)), 4),
        )
        if not separated(pos, part.radius, placed):
            continue
        b = part.behaviour
        options = [b]
        if b.kind != "still":
            options = behaviour_variants(b.kind, pos, b.slot, b.new_colour)
        options = [
            replace(o, amplitude=b.amplitude, speed=b.speed) if o.kind != "still" else o
            for o in options
        ]
        fitting = [replace(part, pos=pos, behaviour=o) for o in options]
        fitting = [p for p in fitting if fits(p, cameras)]
        if fitting:
            return fitting[int(rng.integers(len(fitting)))]
    return None


def _occluders(
    rng: np.random.Generator,
    specs: list[tuple[str, str]],
    counted: list[Part],
    placed: list[Part],
    cameras: list[ProbeCamera],
    inputs: tuple[int, ...],
    rendered: list[ProbeCamera],
) -> list[Part] | None:
    """Occluder k in front of counted part k mod T, from the first of that part's input views
    (in a random order) that no occluder covers it from yet and where the occluder fits."""
    views = {id(p): [int(v) for v in rng.permutation(inputs)] for p in counted}
    out: list[Part] = []
    for k, (colour, shape) in enumerate(specs):
        target = counted[k % len(counted)]
        radius = round(min(0.6, OCCLUDER_SIZE * target.radius), 4)
        gap = GAP * (target.radius + radius) + 0.05
        others = [p for p in placed + out if p is not target]
        for view in views[id(target)]:
            centre = np.asarray(target.pos) + gap * towards(cameras[view], target.pos)
            pos = vec3(round(float(v), 4) for v in centre)
            part = Part(shape, colour, pos, radius)
            if separated(pos, radius, others) and fits(part, rendered):
                views[id(target)].remove(view)
                out.append(part)
                break
        else:
            return None
    return out
