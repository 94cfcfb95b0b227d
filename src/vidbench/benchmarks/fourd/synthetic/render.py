"""Drawing a scene from a ring of cameras: simple perspective, painter's algorithm, PIL shapes.

View k sits at angle 2*pi*(k - 1)/views around the vertical axis, at height 0, looking at the
centre: view 1, the first of the official input views [1, 8, 16], looks from +z (the front), so
every question about what the front camera sees is answered by the first video a model is shown.
The background is white.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Iterator, Sequence

import numpy as np
from PIL import Image, ImageDraw

from vidbench.benchmarks.fourd.synthetic.scene import Part, PartState, Scene, frame_times, state_at

CAMERA_DISTANCE = 6.0
HALF_EXTENT = 2.0  # world units from the image centre to its edge, at the centre's depth
BACKGROUND = (255, 255, 255)

Rgb = tuple[int, int, int]


FRONT_VIEW = 1  # the first view of the official 4D-Bench input (views 1, 8, 16)


def view_angle(view: int, views: int) -> float:
    """Angle (radians) of camera ``view`` in a ring of ``views`` cameras (FRONT_VIEW at 0)."""
    return 2.0 * math.pi * (view - FRONT_VIEW) / views


def project(pos: tuple[float, float, float], angle: float) -> tuple[float, float, float, float]:
    """(screen x, screen y, depth, scale) of a world point seen by the camera at ``angle``.

    Screen coordinates are in world units at the centre's depth (x right, y up); larger depth is
    nearer to the camera; ``scale`` is the perspective magnification at that depth.
    """
    x, y, z = pos
    c, s = math.cos(angle), math.sin(angle)
    depth = x * s + z * c
    scale = CAMERA_DISTANCE / (CAMERA_DISTANCE - depth)
    return (x * c - z * s) * scale, y * scale, depth, scale


def _mix(rgb: Rgb, other: Rgb, w: float) -> Rgb:
    r, g, b = (round(a * (1 - w) + o * w) for a, o in zip(rgb, other, strict=True))
    return (r, g, b)


@functools.lru_cache(maxsize=64)
def _shades(rgb: Rgb) -> tuple[Rgb, Rgb]:
    """(dark, light) variants of a colour for simple shading."""
    return _mix(rgb, (0, 0, 0), 0.35), _mix(rgb, (255, 255, 255), 0.45)


def _draw_part(
    draw: ImageDraw.ImageDraw, shape: str, cx: float, cy: float, r: float, rgb: Rgb
) -> None:
    """Draw one shaded shape centred at pixel (cx, cy) with radius ``r`` pixels."""
    dark, light = _shades(rgb)
    if shape == "sphere":
        draw.ellipse((cx - r, cy - r, cx + r, cy + r), fill=rgb, outline=dark)
        h = 0.4 * r
        hx, hy = cx - 0.35 * r, cy - 0.35 * r
        draw.ellipse((hx - h, hy - h, hx + h, hy + h), fill=light)
    elif shape == "cube":
        a = 0.85 * r
        draw.rectangle((cx - a, cy - a, cx + a, cy + a), fill=rgb, outline=dark)
        draw.rectangle((cx - a, cy - a, cx + a, cy - 0.55 * a), fill=light, outline=dark)
    elif shape == "cone":
        top, bottom = cy - 0.9 * r, cy + 0.9 * r
        draw.polygon([(cx, top), (cx - r, bottom), (cx + r, bottom)], fill=rgb, outline=dark)
        draw.polygon([(cx, top), (cx, bottom), (cx + r, bottom)], fill=dark)
    elif shape == "cylinder":
        w, e = 0.6 * r, 0.2 * r
        draw.rectangle((cx - w, cy - r + e, cx + w, cy + r - e), fill=rgb)
        draw.ellipse((cx - w, cy + r - 2 * e, cx + w, cy + r), fill=rgb)
        draw.rectangle((cx + 0.3 * w, cy - r + e, cx + w, cy + r - e), fill=dark)
        draw.ellipse((cx - w, cy - r, cx + w, cy - r + 2 * e), fill=light, outline=dark)
    else:
        raise ValueError(f"unknown shape {shape!r}")


def draw_states(
    shapes: Sequence[str], states: Sequence[PartState], angle: float, size: int
) -> np.ndarray:
    """Render parts in the given states from the camera at ``angle`` as a size x size RGB array."""
    img = Image.new("RGB", (size, size), BACKGROUND)
    draw = ImageDraw.Draw(img)
    ppu = size / (2.0 * HALF_EXTENT)
    placed = []
    for i, (shape, st) in enumerate(zip(shapes, states, strict=True)):
        if not st.visible:
            continue
        sx, sy, depth, scale = project(st.pos, angle)
        placed.append((depth, i, shape, sx, sy, st.radius * scale, st.rgb))
    placed.sort()  # far (small depth) first: nearer parts are drawn over farther ones
    for _, _, shape, sx, sy, r, rgb in placed:
        _draw_part(draw, shape, size / 2 + sx * ppu, size / 2 - sy * ppu, r * ppu, rgb)
    return np.asarray(img)


def render(scene: Scene, t: float, view: int = 0, views: int = 24, size: int = 128) -> np.ndarray:
    """One frame of ``scene`` at time ``t`` from camera ``view``."""
    states = [state_at(p, t) for p in scene.parts]
    return draw_states([p.shape for p in scene.parts], states, view_angle(view, views), size)


def scene_states(parts: Sequence[Part], frames: int) -> list[list[PartState]]:
    """States of all parts for every frame (view independent; compute once per object)."""
    return [[state_at(p, t) for p in parts] for t in frame_times(frames)]


def view_frames(
    scene: Scene,
    view: int,
    views: int,
    size: int,
    states: Sequence[Sequence[PartState]],
) -> Iterator[np.ndarray]:
    """Frames of one view, given the per-frame states from :func:`scene_states`."""
    shapes = [p.shape for p in scene.parts]
    angle = view_angle(view, views)
    for st in states:
        yield draw_states(shapes, st, angle, size)
