"""Scene model of a procedural 4D object: coloured parts, each with one behaviour over time.

World frame (the front camera's frame: view 1, the first video of the official input): x points
right, y points up, z points towards that camera. Time ``t`` runs from 0 (first frame) to 1 (last
frame). Events happen in SLOTS placed so that the official input (six frames per view, `interval`
sampling) shows each one: a frame before it, one in its middle, one after it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol

SHAPES: tuple[str, ...] = ("sphere", "cube", "cone", "cylinder")

COLOURS: dict[str, tuple[int, int, int]] = {
    "red": (215, 38, 38),
    "blue": (38, 84, 220),
    "green": (40, 165, 62),
    "yellow": (238, 200, 24),
    "purple": (132, 58, 190),
    "orange": (245, 128, 20),
    "pink": (240, 110, 180),
    "brown": (128, 78, 38),
    "black": (35, 35, 35),
}

DIRECTIONS: dict[str, tuple[float, float, float]] = {
    "left": (-1.0, 0.0, 0.0),
    "right": (1.0, 0.0, 0.0),
    "up": (0.0, 1.0, 0.0),
    "down": (0.0, -1.0, 0.0),
    "towards": (0.0, 0.0, 1.0),
    "away": (0.0, 0.0, -1.0),
}

KINDS: tuple[str, ...] = (
    "still",
    "move",
    "orbit",
    "jump",
    "grow",
    "shrink",
    "recolour",
    "appear",
    "disappear",
)

MOVE_DISTANCE = 1.0
JUMP_HEIGHT = 0.8
GROW_FACTOR = 1.6
SHRINK_FACTOR = 0.55

# Event time slots (start, end), each centred on one of the frames the official input samples
# (frame i * (48 // 6) of 48: t = i * 8 / 47, i = 1..4) with the frames before and after it
# outside: every event is seen before, during (a jump at its top, an orbit half way round) and
# after, and events of different slots are told apart in time. `check_visible` checks this for
# other video lengths.
SLOT_WIDTH = 0.12
SLOTS: tuple[tuple[float, float], ...] = tuple(
    (round(i * 8 / 47 - SLOT_WIDTH / 2, 4), round(i * 8 / 47 + SLOT_WIDTH / 2, 4))
    for i in range(1, 5)
)
OFFICIAL_FRAMES = 6  # frames per view of the official input (`interval` sampler)


MAX_AMPLITUDE = 2.0  # a shrink by 0.45 x 2.2 would reach size 0


@dataclass(frozen=True)
class Behaviour:
    """What a part does: ``kind`` in KINDS, during slot ``slot`` (None for "still").

    ``amplitude`` scales the size of a motion (the distance moved, the jump's height, the change
    of size; an orbit stays one full turn); ``speed`` (1 or more) shortens the event to
    SLOT_WIDTH / speed around its slot's centre, where the official input samples a frame."""

    kind: str = "still"
    slot: int | None = None
    direction: str | None = None  # for "move": a key of DIRECTIONS
    new_colour: str | None = None  # for "recolour"
    amplitude: float = 1.0
    speed: float = 1.0

    def __post_init__(self) -> None:
        if not 0.0 < self.amplitude <= MAX_AMPLITUDE:
            raise ValueError(f"motion amplitude must be in (0, {MAX_AMPLITUDE}]: {self.amplitude}")
        if self.speed < 1.0:
            raise ValueError(f"motion speed must be 1 or more, got {self.speed}")

    @property
    def window(self) -> tuple[float, float]:
        """(t0, t1) of the behaviour; (0, 0) for still parts."""
        if self.slot is None:
            return (0.0, 0.0)
        t0, t1 = SLOTS[self.slot]
        if self.speed == 1.0:
            return (t0, t1)
        centre, half = (t0 + t1) / 2, (t1 - t0) / (2 * self.speed)
        return (centre - half, centre + half)

    @property
    def instant(self) -> float:
        """Moment of an instantaneous change: a quarter into the slot, so the sampled frame in
        the slot's middle already shows it."""
        t0, t1 = self.window
        return t0 + (t1 - t0) / 4


@dataclass(frozen=True)
class Part:
    """One coloured shape: start position (x, y, z), size ``radius``, and its behaviour."""

    shape: str
    colour: str
    pos: tuple[float, float, float]
    radius: float
    behaviour: Behaviour = Behaviour()


class ScreenProjection(Protocol):
    """A camera as the spatial questions see it: a world point (this module's frame) to
    (screen x, screen y, depth), screen coordinates in world units at the depth of the scene's
    centre (x right, y up), larger depth nearer to the camera. Hashable (questions cache by it)."""

    def screen(self, pos: tuple[float, float, float]) -> tuple[float, float, float]: ...

    def __hash__(self) -> int: ...


@dataclass(frozen=True)
class Scene:
    """A 4D object: its uid and its parts."""

    uid: str
    parts: tuple[Part, ...]
    occlusion: tuple[int, int] | None = None  # (occluder, hidden) part indices, if built so
    # The camera of the first video a model is shown ("as seen in the first video"); None: the
    # 2D renderer's front camera (render.FRONT_VIEW).
    first_view: ScreenProjection | None = None


@dataclass(frozen=True)
class PartState:
    """A part at one moment."""

    pos: tuple[float, float, float]
    radius: float
    rgb: tuple[int, int, int]
    visible: bool


def _ease(u: float) -> float:
    u = min(max(u, 0.0), 1.0)
    return u * u * (3.0 - 2.0 * u)


def _progress(b: Behaviour, t: float) -> float:
    t0, t1 = b.window
    return min(max((t - t0) / (t1 - t0), 0.0), 1.0) if t1 > t0 else 0.0


def present(part: Part, t: float) -> bool:
    """Whether the part exists at time t (appearing parts pop in, disappearing ones pop out)."""
    b = part.behaviour
    if b.kind == "appear":
        return t >= b.instant
    if b.kind == "disappear":
        return t < b.instant
    return True


def colour_at(part: Part, t: float) -> str:
    """Colour name of the part at time t."""
    b = part.behaviour
    if b.kind == "recolour" and b.new_colour is not None and t >= b.instant:
        return b.new_colour
    return part.colour


def state_at(part: Part, t: float) -> PartState:
    """Position, size, colour and visibility of ``part`` at time ``t``."""
    b = part.behaviour
    x, y, z = part.pos
    radius = part.radius
    u = _progress(b, t)
    if b.kind == "move" and b.direction is not None:
        dx, dy, dz = DIRECTIONS[b.direction]
        e = _ease(u) * MOVE_DISTANCE * b.amplitude
        x, y, z = x + dx * e, y + dy * e, z + dz * e
    elif b.kind == "orbit":
        a = 2.0 * math.pi * _ease(u)
        c, s = math.cos(a), math.sin(a)
        x, z = x * c + z * s, -x * s + z * c
    elif b.kind == "jump":
        y += JUMP_HEIGHT * b.amplitude * math.sin(math.pi * u)
    elif b.kind == "grow":
        radius *= 1.0 + (GROW_FACTOR - 1.0) * b.amplitude * _ease(u)
    elif b.kind == "shrink":
        radius *= 1.0 + (SHRINK_FACTOR - 1.0) * b.amplitude * _ease(u)
    return PartState((x, y, z), radius, COLOURS[colour_at(part, t)], present(part, t))


def official_times(frames: int) -> list[float]:
    """Times of the frames the official input samples from a video of ``frames`` frames:
    i * (frames // 6) for i in 0..5 (never the last frame)."""
    step = frames // OFFICIAL_FRAMES
    return [i * step / (frames - 1) for i in range(OFFICIAL_FRAMES)] if step else []


def check_visible(frames: int) -> None:
    """ValueError unless the official input of ``frames``-frame videos shows every event slot
    before, in its middle (after an instant change) and after."""
    times = official_times(frames)
    for t0, t1 in SLOTS:
        during = [t for t in times if t0 + (t1 - t0) / 4 < t < t1]
        if not (during and any(t <= t0 for t in times) and any(t >= t1 for t in times)):
            raise ValueError(
                f"with {frames} frames per video the official input (6 frames per view) misses "
                f"events of the slot {t0:.2f}-{t1:.2f}; use a multiple of 6, 12 or more "
                "(48 by default)"
            )


def frame_times(frames: int) -> list[float]:
    """Normalised time of each frame index: 0 for the first frame, 1 for the last."""
    if frames <= 1:
        return [0.0] * max(frames, 0)
    return [f / (frames - 1) for f in range(frames)]


def label(part: Part) -> str:
    """Unambiguous noun phrase for a part, e.g. "the red sphere" (colour = starting colour)."""
    if part.behaviour.kind == "recolour":
        return f"the {part.shape} that is {part.colour} at first"
    return f"the {part.colour} {part.shape}"
