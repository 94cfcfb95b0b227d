"""`vidbench synth 4d --assets DIR`: the procedural scenes as animated glTF files, for
`vidbench curate 4d render`, so the whole 4D-Bench construction pipeline runs offline.

Each scene becomes DIR/<uid>.glb, one node per part, and DIR/manifest.jsonl lists them
(`{"uid": ..., "path": ...}` per line, paths relative to DIR). The animation samples the scene
model (scene.py) at every frame (frame f at f / fps seconds, scene time f / (frames - 1)):
moving, orbiting, jumping, growing and shrinking parts animate their translation and scale
(linear between frames), appearing and disappearing parts their scale (0 while absent; steps),
and colour changes their material's base colour through KHR_animation_pointer (steps), which
Blender 5.0's glTF importer reads. glTF and the scene model share their axes: y up, the front
camera (view 1) on +z.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from vidbench.benchmarks.fourd.synthetic.gltf import GltfBuilder, shape_mesh
from vidbench.benchmarks.fourd.synthetic.scene import SHAPES, Scene, frame_times, state_at
from vidbench.benchmarks.fourd.synthetic.writer import build_object
from vidbench.core.files import make_folder, write_jsonl
from vidbench.progress import progress_bar

MANIFEST = "manifest.jsonl"
DEFAULT_FRAMES = 48
DEFAULT_FPS = 24


def srgb_to_linear(rgb: tuple[int, int, int]) -> list[float]:
    """glTF colour factors are linear; the scene's colours are sRGB bytes."""
    c = np.asarray(rgb, dtype=np.float64) / 255.0
    lin = np.where(c <= 0.04045, c / 12.92, ((c + 0.055) / 1.055) ** 2.4)
    return [round(float(v), 6) for v in lin] + [1.0]


def _changes(values: np.ndarray) -> bool:
    return bool(np.any(np.abs(values - values[0]) > 1e-9))


def scene_gltf(scene: Scene, frames: int = DEFAULT_FRAMES, fps: int = DEFAULT_FPS) -> GltfBuilder:
    """The glTF document of ``scene``: meshes, materials, nodes and the animation."""
    if frames < 2:
        raise ValueError(f"an animation needs 2 frames or more, got {frames}")
    gltf = GltfBuilder()
    doc = gltf.doc
    meshes: dict[str, tuple[int, int]] = {}
    for shape in SHAPES:
        positions, normals = shape_mesh(shape)
        meshes[shape] = (gltf.accessor(positions, "VEC3", True), gltf.accessor(normals, "VEC3"))
    times = gltf.accessor(np.arange(frames) / fps, "SCALAR", True)
    states = [[state_at(p, t) for t in frame_times(frames)] for p in scene.parts]
    doc.update(materials=[], meshes=[], nodes=[])
    channels: list[dict] = []
    samplers: list[dict] = []

    def animate(values: np.ndarray, kind: str, target: dict, step: bool) -> None:
        interpolation = "STEP" if step else "LINEAR"
        output = gltf.accessor(values, kind)
        samplers.append({"input": times, "output": output, "interpolation": interpolation})
        channels.append({"sampler": len(samplers) - 1, "target": target})

    for i, (part, track) in enumerate(zip(scene.parts, states, strict=True)):
        position, normal = meshes[part.shape]
        doc["materials"].append(
            {
                "name": f"{part.colour} {part.shape}",
                "pbrMetallicRoughness": {
                    "baseColorFactor": srgb_to_linear(track[0].rgb),
                    "metallicFactor": 0.0,
                    "roughnessFactor": 0.6,
                },
            }
        )
        primitive = {"attributes": {"POSITION": position, "NORMAL": normal}, "material": i}
        doc["meshes"].append({"name": part.shape, "primitives": [primitive]})
        translation = np.array([s.pos for s in track])
        scale = np.array([[s.radius if s.visible else 0.0] * 3 for s in track])
        colour = np.array([srgb_to_linear(s.rgb) for s in track])
        doc["nodes"].append(
            {
                "name": f"part{i}_{part.colour}_{part.shape}",
                "mesh": i,
                "translation": translation[0].tolist(),
                "scale": scale[0].tolist(),
            }
        )
        if _changes(translation):
            animate(translation, "VEC3", {"node": i, "path": "translation"}, step=False)
        if _changes(scale):
            step = part.behaviour.kind in ("appear", "disappear")
            animate(scale, "VEC3", {"node": i, "path": "scale"}, step=step)
        if _changes(colour):
            pointer = f"/materials/{i}/pbrMetallicRoughness/baseColorFactor"
            target = {
                "path": "pointer",
                "extensions": {"KHR_animation_pointer": {"pointer": pointer}},
            }
            animate(colour, "VEC4", target, step=True)
            doc["extensionsUsed"] = ["KHR_animation_pointer"]
    doc["scenes"] = [{"name": scene.uid, "nodes": list(range(len(scene.parts)))}]
    doc["scene"] = 0
    if channels:
        doc["animations"] = [{"name": "motion", "channels": channels, "samplers": samplers}]
    return gltf


def export_assets(
    out: Path,
    objects: int,
    seed: int = 0,
    frames: int = DEFAULT_FRAMES,
    fps: int = DEFAULT_FPS,
    progress: bool = True,
) -> Path:
    """Write ``objects`` scenes (the same as `synth 4d` with this seed) to OUT/<uid>.glb and
    OUT/manifest.jsonl; returns the manifest's path."""
    out = make_folder(Path(out), "--assets")
    lines = []
    with progress_bar(disable=not progress) as bar:
        task = bar.add_task("glTF assets", total=objects)
        for index in range(objects):
            scene, _, _ = build_object(seed, index)
            scene_gltf(scene, frames, fps).write_glb(out / f"{scene.uid}.glb")
            lines.append({"uid": scene.uid, "path": f"{scene.uid}.glb"})
            bar.advance(task)
    manifest = out / MANIFEST
    write_jsonl(manifest, lines)
    return manifest
