"""The ring of cameras around a normalised object (4D-Bench paper, supplement B.1): views evenly
spread around the vertical axis with a seeded jitter, radius 2.2-2.6 m, height 0.8-1.2 m, all
looking at the centre.

Coordinates are Blender's (z up). View k sits at the angle the 2D renderer gives it
(synthetic/render.py `view_angle`): view 1 looks from the front, which is glTF's +z, Blender's -y
after import, so the same view of a generated scene shows the same side in both renderers.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import asdict, dataclass

import numpy as np

from vidbench.benchmarks.fourd.synthetic.render import view_angle

RADIUS = (2.2, 2.6)
HEIGHT = (0.8, 1.2)
ANGLE_JITTER = 0.25  # of the spacing between two views, either way


@dataclass(frozen=True)
class Camera:
    """One camera: its view index, angle (radians), distance from the vertical axis, height and
    position (x, y, z), looking at the origin."""

    view: int
    angle: float
    radius: float
    height: float
    position: tuple[float, float, float]

    def to_json(self) -> dict:
        return asdict(self)


def ring(uid: str, views: int, seed: int, jitter: float = 1.0) -> list[Camera]:
    """``views`` cameras for object ``uid``; the same (uid, views, seed) gives the same ring.

    ``jitter`` scales each camera's random offsets (of its angle, and of its radius and height
    from the middle of their ranges): 0 puts every camera exactly on the ring, 1 is the paper's
    spread."""
    rng = np.random.default_rng([seed, zlib.crc32(uid.encode())])
    spacing = 2.0 * math.pi / views
    cameras = []
    for k in range(views):
        offset = rng.uniform(-ANGLE_JITTER, ANGLE_JITTER) * spacing
        radius, height = float(rng.uniform(*RADIUS)), float(rng.uniform(*HEIGHT))
        if jitter != 1.0:
            offset *= jitter
            radius = _towards_middle(radius, RADIUS, jitter)
            height = _towards_middle(height, HEIGHT, jitter)
        angle = view_angle(k, views) + offset
        radius, height = round(radius, 6), round(height, 6)
        position = (radius * math.sin(angle), -radius * math.cos(angle), height)
        cameras.append(Camera(k, angle, radius, height, tuple(round(p, 6) for p in position)))
    return cameras


def _towards_middle(value: float, bounds: tuple[float, float], jitter: float) -> float:
    middle = (bounds[0] + bounds[1]) / 2
    return middle + jitter * (value - middle)
