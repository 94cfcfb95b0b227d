"""The probe's cameras: the ring of `curate 4d render` (curate/cameras.py) in scene units, and the
projection of Blender's default camera, so that what a question says about the first video is
computed with the camera that renders it.

The probe does not normalise objects (curate's worker scales each to the unit cube): the scenes
already have one size (synthetic/sample.py keeps parts within about 1.5 units of the centre), so
the ring is scaled instead, by SCALE. Coordinates: the scene's (synthetic/scene.py: y up, view 1
on +z, as glTF) become Blender's (z up) as the glTF importer makes them: (x, y, z) -> (x, -z, y).
Blender's camera looks along its -z axis with its y axis towards the world's up, through a 36 mm
sensor behind a 50 mm lens (its defaults, which the worker sets).
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from vidbench.benchmarks.fourd.curate.cameras import ring

SCALE = 2.5  # the ring's radius 2.2-2.6 and height 0.8-1.2 become 5.5-6.5 and 2-3 units
LENS_MM = 50.0
SENSOR_MM = 36.0
TAN_HALF_FOV = SENSOR_MM / 2 / LENS_MM
RING_VIEWS = 24

Vec3 = tuple[float, float, float]


def vec3(values: Iterable[float]) -> Vec3:
    """Three coordinates as a point (a ValueError when there are not three)."""
    x, y, z = values
    return float(x), float(y), float(z)


def to_blender(pos: Vec3) -> np.ndarray:
    """A scene point in Blender's coordinates."""
    x, y, z = pos
    return np.array([x, -z, y], dtype=float)


@dataclass(frozen=True)
class ProbeCamera:
    """One camera of the ring at ``position`` (Blender coordinates), looking at the origin."""

    view: int
    position: Vec3

    @functools.cached_property
    def axes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The camera's x (right), y (up) and z (backwards) axes in Blender's coordinates."""
        forward = -np.asarray(self.position, dtype=float)
        forward /= np.linalg.norm(forward)
        up = np.array([0.0, 0.0, 1.0]) - forward[2] * forward
        up /= np.linalg.norm(up)
        back = -forward
        return np.cross(up, back), up, back

    @functools.cached_property
    def _rows(self) -> tuple[Vec3, Vec3, Vec3]:
        """The axes as plain tuples (projecting one point with numpy costs more than this)."""
        right, up, back = self.axes
        return vec3(right), vec3(up), vec3(back)

    def ndc(self, pos: Vec3) -> tuple[float, float, float]:
        """(x, y) of a scene point on the image, -1..1 from edge to edge (x right, y up), and
        its distance in front of the camera along the view axis."""
        (rx, ry, rz), (ux, uy, uz), (bx, by, bz) = self._rows
        cx, cy, cz = self.position
        x, y, z = pos[0] - cx, -pos[2] - cy, pos[1] - cz  # scene -> Blender, from the camera
        ahead = -(x * bx + y * by + z * bz)
        scale = 1.0 / (ahead * TAN_HALF_FOV)
        return (x * rx + y * ry + z * rz) * scale, (x * ux + y * uy + z * uz) * scale, ahead

    def screen(self, pos: Vec3) -> tuple[float, float, float]:
        """(screen x, screen y, depth) as the spatial questions take them (scene.ScreenProjection):
        image coordinates in scene units at the centre's distance, depth larger when nearer."""
        x, y, ahead = self.ndc(pos)
        centre = float(np.linalg.norm(self.position))
        half = centre * TAN_HALF_FOV
        return x * half, y * half, centre - ahead

    def to_json(self) -> dict:
        return {"view": self.view, "position": list(self.position)}


def probe_ring(uid: str, seed: int, jitter: float) -> list[ProbeCamera]:
    """The 24 cameras of object ``uid``: curate's ring for (uid, seed, jitter), scaled."""
    return [
        ProbeCamera(c.view, vec3(round(SCALE * p, 6) for p in c.position))
        for c in ring(uid, RING_VIEWS, seed, jitter)
    ]


def towards(camera: ProbeCamera, pos: Vec3) -> np.ndarray:
    """Unit vector, in scene coordinates, from ``pos`` towards the camera."""
    x, y, z = camera.position
    scene_camera = np.array([x, z, -y], dtype=float)  # Blender -> scene
    d = scene_camera - np.asarray(pos, dtype=float)
    return d / np.linalg.norm(d)
