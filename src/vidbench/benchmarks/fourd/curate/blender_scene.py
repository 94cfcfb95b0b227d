"""Code that runs inside Blender's Python module (bpy): load one asset, normalise it to the unit
cube, light it, and render frames from a camera as RGB arrays on a white background.

Only the render worker (workers.py) imports this module, one object per process: bpy keeps one
global scene. The object is scaled so the bounding box of its meshes over all rendered frames
fits the unit cube, centred at the origin (4D-Bench paper, supplement B.1: "the normalized 4D
object"). The film is transparent and each frame is composited over white, so the background is
exactly white whatever the lighting; the lighting is fixed: a grey world and one sun.
"""

from __future__ import annotations

import math
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import bpy  # the render extra; the worker checks it is installed before importing this module
import numpy as np
from mathutils import Vector
from PIL import Image

from vidbench.benchmarks.fourd.curate.settings import RenderSettings

WORLD_GREY = 0.35
SUN_STRENGTH = 3.0
SUN_ROTATION = (math.radians(40), math.radians(10), math.radians(30))
_IMPORTERS = {
    ".glb": lambda p: bpy.ops.import_scene.gltf(filepath=p),
    ".gltf": lambda p: bpy.ops.import_scene.gltf(filepath=p),
    ".fbx": lambda p: bpy.ops.import_scene.fbx(filepath=p),
    ".obj": lambda p: bpy.ops.wm.obj_import(filepath=p),
}


class AssetError(Exception):
    """An asset that cannot be rendered; ``reason`` is short and countable."""

    def __init__(self, reason: str, detail: str = "") -> None:
        super().__init__(f"{reason}: {detail}" if detail else reason)
        self.reason = reason
        self.detail = detail


def blender_version() -> str:
    return bpy.app.version_string


def load(path: Path, fps: int) -> None:
    """Empty scene at ``fps`` (the importer times animations by it), then the asset."""
    bpy.ops.wm.read_factory_settings(use_empty=True)
    bpy.context.scene.render.fps = fps
    importer = _IMPORTERS.get(path.suffix.lower())
    if importer is None:
        raise AssetError("unsupported format", path.suffix)
    try:
        result = importer(str(path))
    except (RuntimeError, ValueError, KeyError, IndexError, TypeError, OSError) as e:
        raise AssetError("cannot load", f"{type(e).__name__}: {str(e).strip()[-300:]}") from None
    if "FINISHED" not in result:
        raise AssetError("cannot load", f"importer returned {sorted(result)}")
    if not any(o.type == "MESH" and len(o.data.polygons) for o in bpy.context.scene.objects):
        raise AssetError("no mesh")


def animation_range() -> tuple[int, int] | None:
    """First and last frame of all the file's animations; None when nothing is animated."""
    ranges = [a.frame_range for a in bpy.data.actions if _has_keys(a)]
    if not ranges:
        return None
    start = math.floor(min(r[0] for r in ranges))
    end = math.ceil(max(r[1] for r in ranges))
    return (start, end) if end > start else None


def _has_keys(action: bpy.types.Action) -> bool:
    """Whether an action holds keyframes (Blender 5 keeps them in layers, strips and channel
    bags; `Action.fcurves` is gone)."""
    return any(
        curve.keyframe_points
        for layer in action.layers
        for strip in layer.strips
        for bag in strip.channelbags
        for curve in bag.fcurves
    )


def _mesh_bounds(frames: range) -> tuple[Vector, Vector]:
    scene = bpy.context.scene
    lo = Vector((math.inf,) * 3)
    hi = Vector((-math.inf,) * 3)
    for frame in frames:
        scene.frame_set(frame)
        for obj in scene.objects:
            if obj.type != "MESH":
                continue
            for corner in obj.bound_box:
                p = obj.matrix_world @ Vector(corner)
                lo = Vector(map(min, lo, p))
                hi = Vector(map(max, hi, p))
    if not math.isfinite(lo.x):
        raise AssetError("no mesh")
    return lo, hi


def normalise(frames: range) -> dict:
    """Parent every root object to an empty that scales the meshes' bounding box over ``frames``
    into the unit cube, centred at the origin; returns the scale and offset applied."""
    lo, hi = _mesh_bounds(frames)
    extent = max(hi - lo)
    if extent <= 0:
        raise AssetError("no mesh", "the meshes have no extent")
    scale = 1.0 / extent
    centre = (lo + hi) / 2
    root = bpy.data.objects.new("vidbench_normalise", None)
    bpy.context.scene.collection.objects.link(root)
    for obj in list(bpy.context.scene.objects):
        if obj.parent is None and obj is not root:
            obj.parent = root
    root.scale = (scale,) * 3
    root.location = -centre * scale
    return {"scale": scale, "offset": list(-centre * scale)}


def bounding_radius(frames: range) -> float:
    """Radius of the sphere about the origin that holds every vertex of the meshes over
    ``frames``, as rendered (armatures and modifiers applied): what the cameras frame."""
    scene = bpy.context.scene
    radius = 0.0
    for frame in frames:
        scene.frame_set(frame)
        depsgraph = bpy.context.evaluated_depsgraph_get()
        for obj in scene.objects:
            if obj.type != "MESH":
                continue
            evaluated = obj.evaluated_get(depsgraph)
            mesh = evaluated.to_mesh()
            try:
                points = np.empty(len(mesh.vertices) * 3, np.float64)
                mesh.vertices.foreach_get("co", points)
            finally:
                evaluated.to_mesh_clear()
            world = np.array(evaluated.matrix_world)
            points = points.reshape(-1, 3) @ world[:3, :3].T + world[:3, 3]
            radius = max(radius, float(np.linalg.norm(points, axis=1).max(initial=0.0)))
    if radius <= 0:
        raise AssetError("no mesh", "the meshes have no extent")
    return radius


def setup(settings: RenderSettings) -> None:
    """Renderer, resolution, transparent film, fixed lighting."""
    scene = bpy.context.scene
    render = scene.render
    render.resolution_x = render.resolution_y = settings.size
    render.resolution_percentage = 100
    render.film_transparent = True
    render.image_settings.file_format = "PNG"
    render.image_settings.color_mode = "RGBA"
    scene.view_settings.view_transform = "Standard"  # colours as authored, not AgX's tone curve
    if settings.threads:
        render.threads_mode = "FIXED"
        render.threads = settings.threads
    if settings.engine == "cycles":
        render.engine = "CYCLES"
        scene.cycles.samples = settings.samples
        scene.cycles.use_denoising = settings.denoise
        scene.cycles.use_adaptive_sampling = False
        scene.cycles.seed = settings.seed
        scene.cycles.device = "GPU" if settings.device == "gpu" else "CPU"
        if settings.device == "gpu":
            _enable_gpu()
    else:
        render.engine = "BLENDER_EEVEE"
        scene.eevee.taa_render_samples = settings.samples
    world = bpy.data.worlds.new("vidbench_world")
    world.color = (WORLD_GREY,) * 3
    scene.world = world
    sun = bpy.data.lights.new("vidbench_sun", "SUN")
    sun.energy = SUN_STRENGTH
    sun_object = bpy.data.objects.new("vidbench_sun", sun)
    sun_object.rotation_euler = SUN_ROTATION
    scene.collection.objects.link(sun_object)


def _enable_gpu() -> None:
    """Cycles on the first GPU backend that has a device (OptiX, CUDA, HIP, oneAPI, Metal)."""
    prefs = bpy.context.preferences.addons["cycles"].preferences
    for backend in ("OPTIX", "CUDA", "HIP", "ONEAPI", "METAL"):
        try:
            prefs.compute_device_type = backend
        except TypeError:
            continue
        prefs.get_devices()
        gpus = [d for d in prefs.devices if d.type == backend]
        if gpus:
            for device in gpus:
                device.use = True
            return
    raise AssetError("no GPU", "Cycles found no GPU device (use --device cpu)")


def place_camera(position: tuple[float, float, float], fov: float | None = None) -> None:
    """The scene camera at ``position``, looking at the origin, with the field of view ``fov``
    (radians; None: Blender's default lens, 50 mm on a 36 mm sensor)."""
    scene = bpy.context.scene
    if scene.camera is None:
        scene.camera = bpy.data.objects.new("vidbench_camera", bpy.data.cameras.new("camera"))
        scene.collection.objects.link(scene.camera)
    obj = scene.camera
    if fov is not None:  # framed: cameras.framed
        obj.data.sensor_fit = "AUTO"  # the angle is the wider side's: the frame is square
        obj.data.angle = fov
    obj.location = position
    direction = -Vector(position)
    obj.rotation_euler = direction.to_track_quat("-Z", "Y").to_euler()


@dataclass
class RenderClock:
    """Seconds spent inside Blender's render call (what a render costs, without the rest)."""

    seconds: float = 0.0
    frames: int = 0


def render_frames(frames: range, clock: RenderClock | None = None) -> Iterator[np.ndarray]:
    """Render ``frames`` from the scene camera: HxWx3 uint8 RGB over white (``clock`` adds up
    the time Blender renders)."""
    scene = bpy.context.scene
    with tempfile.TemporaryDirectory(prefix="vidbench-render-") as tmp:
        still = str(Path(tmp) / "frame.png")
        for frame in frames:
            scene.frame_set(frame)
            scene.render.filepath = still
            start = time.perf_counter()
            bpy.ops.render.render(write_still=True)
            if clock is not None:
                clock.seconds += time.perf_counter() - start
                clock.frames += 1
            with Image.open(still) as img:
                rgba = np.asarray(img.convert("RGBA"), dtype=np.float32)
            alpha = rgba[..., 3:] / 255.0
            rgb = rgba[..., :3] * alpha + 255.0 * (1.0 - alpha)
            yield np.clip(np.rint(rgb), 0, 255).astype(np.uint8)
