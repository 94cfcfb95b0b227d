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


def ring(uid: str, views: int, seed: int) -> list[Camera]:
    """``views`` cameras for object ``uid``; the same (uid, views, seed) gives the same ring."""
    rng = np.random.default_rng([seed, zlib.crc32(uid.encode())])
    spacing = 2.0 * math.pi / views
    cameras = []
    for k in range(views):
        angle = view_angle(k, views) + rng.uniform(-ANGLE_JITTER, ANGLE_JITTER) * spacing
        radius = round(float(rng.uniform(*RADIUS)), 6)
        height = round(float(rng.uniform(*HEIGHT)), 6)
        position = (radius * math.sin(angle), -radius * math.cos(angle), height)
        cameras.append(Camera(k, angle, radius, height, tuple(round(p, 6) for p in position)))
    return cameras
