"""What the probe renders, decided before Blender starts: each object's scene, questions and
captions, its glTF asset and the render job that goes with it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from vidbench.benchmarks.fourd.curate.manifest import Asset
from vidbench.benchmarks.fourd.curate.render import RenderJob, shared_threads
from vidbench.benchmarks.fourd.curate.settings import RenderSettings
from vidbench.benchmarks.fourd.probe.camera import RING_VIEWS
from vidbench.benchmarks.fourd.probe.knobs import Knobs
from vidbench.benchmarks.fourd.probe.questions import ProbeQuestion, probe_questions
from vidbench.benchmarks.fourd.probe.scenes import ProbeObject, sample_object
from vidbench.benchmarks.fourd.synthetic.assets import DEFAULT_FPS, scene_gltf
from vidbench.benchmarks.fourd.synthetic.captions import captions
from vidbench.benchmarks.fourd.synthetic.questions import gold_positions
from vidbench.benchmarks.fourd.variants import SPEC
from vidbench.media.cache import file_digest
from vidbench.media.sampling import sample_indices

ATTEMPTS = 10  # scenes drawn per object until one has a question of every subtask
ASSETS = "assets"
MAX_GRID = 64  # rays per image side for the visibility measure


@dataclass(frozen=True)
class ProbeSettings:
    """Everything `synth 4d --renderer blender` is asked for."""

    objects: int
    seed: int = 0
    frames: int = 48
    size: int = 128
    all_views: bool = False  # all 24 views, not only the input's
    knobs: Knobs = field(default_factory=Knobs)
    samples: int = 4  # Cycles samples per pixel
    engine: str = "cycles"
    device: str = "cpu"
    denoise: bool = False
    threads: int = 0  # per worker (0: the cores shared between the workers)
    workers: int = 1

    @property
    def grid(self) -> int:
        return min(self.size, MAX_GRID)

    def input_frames(self) -> list[int]:
        """The frames the official input samples from each video (interval, six per view)."""
        return sample_indices(self.frames, SPEC.frames, SPEC.sampler)

    def render_settings(self) -> RenderSettings:
        """What each worker renders with (curate/settings.py; its motion trimming is unused)."""
        views = RING_VIEWS if self.all_views else self.knobs.input_views
        settings = RenderSettings(
            views=views,
            size=self.size,
            max_frames=self.frames,
            fps=DEFAULT_FPS,
            seed=self.seed,
            engine=self.engine,
            device=self.device,
            samples=self.samples,
            denoise=self.denoise,
            threads=self.threads,
        )
        return shared_threads(settings, self.workers)


@dataclass(frozen=True)
class PlannedObject:
    obj: ProbeObject
    questions: list[ProbeQuestion]
    missing: dict[str, str]  # subtask -> why it has no question
    captions: list[str]


def plan_object(settings: ProbeSettings, index: int) -> PlannedObject:
    """Object ``index``: the first draw with a question of every subtask (or, when no draw has,
    the one with the most)."""
    knobs = settings.knobs.of(index)
    positions = gold_positions(settings.seed, index)
    best: PlannedObject | None = None
    for attempt in range(ATTEMPTS):
        obj = sample_object(settings.seed, index, knobs, settings.all_views, attempt)
        rng = np.random.default_rng([settings.seed, index, attempt, 0x51])
        questions, missing = probe_questions(obj, rng, positions)
        planned = PlannedObject(obj, questions, missing, captions(obj.scene))
        if best is None or len(missing) < len(best.missing):
            best = planned
        if not missing:
            break
    assert best is not None
    return best


def write_asset(out: Path, planned: PlannedObject, settings: ProbeSettings) -> Path:
    """OUT/assets/<uid>.glb: the object's animated glTF (synthetic/assets.py)."""
    path = out / ASSETS / f"{planned.obj.scene.uid}.glb"
    scene_gltf(planned.obj.scene, settings.frames, DEFAULT_FPS).write_glb(path)
    return path


def render_job(
    out: Path, planned: PlannedObject, settings: ProbeSettings, asset: Path
) -> RenderJob:
    """The worker's input (probe/worker.py) and the identity of a complete render."""
    obj = planned.obj
    render = settings.render_settings()
    cameras = [obj.cameras[v].to_json() for v in sorted({*obj.views, *obj.inputs})]
    identity = {
        "render": render.identity(),
        "asset": file_digest(asset),
        "frames": settings.frames,
        "views": list(obj.views),
        "inputs": list(obj.inputs),
        "input_frames": settings.input_frames(),
        "grid": settings.grid,
        "cameras": cameras,
    }
    payload = {
        "settings": render.to_json(),
        "identity": identity,  # the worker reads the frames, views and cameras from it
        "asset": asset.relative_to(out).as_posix(),
        "parts": len(obj.scene.parts),
    }
    frames = settings.frames * len(obj.views)
    return RenderJob(Asset(obj.scene.uid, asset), payload, identity, len(obj.views), frames)
