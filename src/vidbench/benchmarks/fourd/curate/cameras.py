"""The ring of cameras around a normalised object (4D-Bench paper, supplement B.1): views evenly
spread around the vertical axis with a seeded jitter, radius 2.2-2.6 m, height 0.8-1.2 m, all
looking at the centre.

Framing: the paper's renders show the object centred and filling most of the frame. The camera
positions stay the paper's; each camera's field of view is set (`framed`) so the object's
bounding sphere (centred at the origin, its radius the farthest vertex over the rendered
frames) spans FILL of the frame in every view, whatever that view's distance.

Coordinates are Blender's (z up). View k sits at the angle the 2D renderer gives it
(synthetic/render.py `view_angle`): view 1 looks from the front, which is glTF's +z, Blender's -y
after import, so the same view of a generated scene shows the same side in both renderers.
"""

from __future__ import annotations

import math
import zlib
from dataclasses import asdict, dataclass, replace

import numpy as np

from vidbench.benchmarks.fourd.synthetic.render import view_angle

RADIUS = (2.2, 2.6)
HEIGHT = (0.8, 1.2)
ANGLE_JITTER = 0.25  # of the spacing between two views, either way
FILL = 0.9  # the bounding sphere's outline spans this fraction of the (square) frame


@dataclass(frozen=True)
class Camera:
    """One camera: its view index, angle (radians), distance from the vertical axis, height and
    position (x, y, z), looking at the origin; `fov`: its field of view (radians, the square
    frame's side), None for Blender's default lens."""

    view: int
    angle: float
    radius: float
    height: float
    position: tuple[float, float, float]
    fov: float | None = None

    def to_json(self) -> dict:
        return asdict(self)

    @property
    def distance(self) -> float:
        return math.dist(self.position, (0.0, 0.0, 0.0))


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
        x, y = round(radius * math.sin(angle), 6), round(-radius * math.cos(angle), 6)
        cameras.append(Camera(k, angle, radius, height, (x, y, round(height, 6))))
    return cameras


def field_of_view(distance: float, sphere_radius: float, fill: float = FILL) -> float:
    """The field of view (radians) in which a sphere of ``sphere_radius`` at the origin, seen
    from ``distance`` by a camera looking at its centre, spans ``fill`` of the frame. Its
    outline is a circle of angular radius asin(r / d), whose image radius is tan of that (in
    focal lengths); the frame's half-side is tan(fov / 2)."""
    if not 0 < sphere_radius < distance:
        raise ValueError(f"a sphere of radius {sphere_radius} seen from {distance}")
    if not 0 < fill <= 1:
        raise ValueError(f"fill must be in (0, 1], got {fill}")
    image_radius = math.tan(math.asin(sphere_radius / distance))
    return 2.0 * math.atan(image_radius / fill)


def framed(cameras: list[Camera], sphere_radius: float, fill: float = FILL) -> list[Camera]:
    """The cameras, each with the field of view that frames the object's bounding sphere."""
    return [
        replace(c, fov=round(field_of_view(c.distance, sphere_radius, fill), 6)) for c in cameras
    ]


def _towards_middle(value: float, bounds: tuple[float, float], jitter: float) -> float:
    middle = (bounds[0] + bounds[1]) / 2
    return middle + jitter * (value - middle)
