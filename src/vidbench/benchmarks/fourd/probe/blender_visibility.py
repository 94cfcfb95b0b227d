"""Inside Blender (bpy): how much of each part a camera sees at a frame, measured by Blender's own
ray casts through a grid of pixel centres.

For each grid pixel one ray goes from the camera through the pixel's centre into the evaluated
scene (`Scene.ray_cast`, the same geometry Cycles renders): the part it hits first is seen there
(an object-index pass at the grid's resolution). A part's silhouette is what the same rays would
hit with the part alone in the scene (`Object.ray_cast`, tried only inside the part's projected
bounding box). Both are counts of grid pixels; a part absent at that frame (scale 0) has none.
"""

from __future__ import annotations

import re

import bpy  # the render extra; only the probe worker imports this module
from bpy_extras.object_utils import world_to_camera_view
from mathutils import Vector

PART_NAME = re.compile(r"^part(\d+)_")  # synthetic/assets.py names each part's node so


def part_objects() -> dict[int, bpy.types.Object]:
    """The scene's mesh objects by part index (from the glTF node names)."""
    found = {}
    for obj in bpy.context.scene.objects:
        match = PART_NAME.match(obj.name)
        if obj.type == "MESH" and match:
            found[int(match.group(1))] = obj
    return found


def _rays(grid: int) -> tuple[Vector, list[list[Vector]]]:
    """The camera's position and the world direction through each grid pixel's centre (rows
    from the top)."""
    scene = bpy.context.scene
    camera = scene.camera
    top_right, _, bottom_left, top_left = camera.data.view_frame(scene=scene)
    across, down = top_right - top_left, bottom_left - top_left
    rotation = camera.matrix_world.to_3x3()
    rows = []
    for i in range(grid):
        v = (i + 0.5) / grid
        rows.append(
            [
                (rotation @ (top_left + across * ((j + 0.5) / grid) + down * v)).normalized()
                for j in range(grid)
            ]
        )
    return camera.matrix_world.translation.copy(), rows


def _box(obj: bpy.types.Object, grid: int) -> tuple[int, int, int, int] | None:
    """Grid rows and columns (first, last + 1) the object's bounding box covers; None when it
    has no extent (absent: scale 0)."""
    if abs(obj.matrix_world.determinant()) < 1e-12:
        return None
    scene = bpy.context.scene
    xs, ys = [], []
    for corner in obj.bound_box:
        x, y, _ = world_to_camera_view(scene, scene.camera, obj.matrix_world @ Vector(corner))
        xs.append(x)
        ys.append(y)

    def clamp(value: float) -> int:
        return min(max(int(value), 0), grid)

    return (
        clamp((1.0 - max(ys)) * grid),
        clamp((1.0 - min(ys)) * grid + 1),
        clamp(min(xs) * grid),
        clamp(max(xs) * grid + 1),
    )


def measure(parts: dict[int, bpy.types.Object], grid: int, count: int) -> list[list[int]]:
    """[seen, silhouette] grid pixels of parts 0..count-1 from the scene camera at the current
    frame."""
    scene = bpy.context.scene
    depsgraph = bpy.context.evaluated_depsgraph_get()
    origin, rays = _rays(grid)
    index = {obj.name: i for i, obj in parts.items()}
    result = [[0, 0] for _ in range(count)]
    for row in rays:
        for direction in row:
            hit, _, _, _, obj, _ = scene.ray_cast(depsgraph, origin, direction)
            if hit and obj is not None and obj.name in index:
                result[index[obj.name]][0] += 1
    for i, obj in parts.items():
        box = _box(obj, grid)
        if box is None:
            continue
        inverse = obj.matrix_world.inverted()
        local_origin, turn = inverse @ origin, inverse.to_3x3()
        top, bottom, left, right = box
        for r in range(top, bottom):
            for c in range(left, right):
                hit, *_ = obj.ray_cast(local_origin, turn @ rays[r][c])
                result[i][1] += int(hit)
    return result
