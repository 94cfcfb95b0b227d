"""One probe object's render, in its own process: `python -m vidbench.benchmarks.fourd.probe.worker
JOB.json`, started by curate/render.py's `render_jobs` (which skips complete objects, runs
several at once and names the ones that fail).

Unlike `curate 4d render`'s worker it keeps every frame (the questions' events sit at known
frames: no trimming), does not normalise the object (the cameras come in scene units with the
job) and renders only the job's views. Then, at every input frame of every input view, it
measures what each part shows (blender_visibility.py). Writes OUT/<uid>/view_{k}_rgb_white_bg.mp4,
then OUT/<uid>/render.json; the seconds Blender spent rendering go to OUT/<uid>/.timing.json
(apart, so that render.json is the same on every machine).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

from vidbench.benchmarks.fourd.curate.settings import RenderSettings
from vidbench.benchmarks.fourd.curate.workers import FrameCount, run_job
from vidbench.benchmarks.fourd.probe.camera import LENS_MM, SENSOR_MM, vec3
from vidbench.benchmarks.fourd.synthetic.writer import video_name
from vidbench.core.files import write_json
from vidbench.media.encode import write_mp4

TIMING_FILE = ".timing.json"


def _point_camera(position: list[float]) -> None:
    import bpy

    from vidbench.benchmarks.fourd.curate import blender_scene as blender

    blender.place_camera(vec3(position))
    data = bpy.context.scene.camera.data
    data.lens, data.sensor_width, data.sensor_fit = LENS_MM, SENSOR_MM, "AUTO"
    bpy.context.view_layer.update()


def render_probe(job: dict, folder: Path, count: FrameCount) -> dict:
    """Render the job's views and measure visibility; returns the render.json record (the
    frames done go to `count`, for the render's progress bar)."""
    import bpy

    from vidbench.benchmarks.fourd.curate import blender_scene as blender
    from vidbench.benchmarks.fourd.probe import blender_visibility as visibility

    start = time.perf_counter()
    spec = job["identity"]
    settings = RenderSettings.from_json(job["settings"])
    blender.load(Path(job["file"]), settings.fps)
    blender.setup(settings)
    parts = visibility.part_objects()
    clock = blender.RenderClock()
    cameras = {c["view"]: c["position"] for c in spec["cameras"]}
    frames = range(spec["frames"])
    count.expect(len(frames) * len(spec["views"]))
    for view in spec["views"]:
        _point_camera(cameras[view])
        # A view's frames are all rendered before any is encoded: x264 fed between Blender's
        # renders gave another bitstream for the same frames in 3 of 30 runs (rendered first,
        # 0 of 90), most likely x264's AVX-512 rate control reading heap bytes it never wrote
        # (media/encode.py, which now keeps x264 at AVX2); kept, as it costs nothing.
        rendered = list(count.counted(blender.render_frames(frames, clock)))
        write_mp4(folder / video_name(view), rendered, fps=settings.fps)
    measured = time.perf_counter()
    counts = []
    for view in spec["inputs"]:
        _point_camera(cameras[view])
        per_frame = []
        for frame in spec["input_frames"]:
            bpy.context.scene.frame_set(frame)
            per_frame.append(visibility.measure(parts, spec["grid"], job["parts"]))
        counts.append(per_frame)
    done = time.perf_counter()
    timing = {
        "render_s": clock.seconds,
        "frames": clock.frames,
        "visibility_s": done - measured,
        "worker_s": done - start,
    }
    write_json(folder / TIMING_FILE, timing, None)
    return {
        "uid": job["uid"],
        "file": job["asset"],
        "blender": blender.blender_version(),
        "settings": spec,
        "videos": [video_name(v) for v in spec["views"]],
        "visibility": {
            "grid": spec["grid"],
            "views": spec["inputs"],
            "frames": spec["input_frames"],
            "counts": counts,  # [view][frame][part] = [seen, silhouette] grid pixels
        },
        "status": "rendered",
    }


if __name__ == "__main__":
    sys.exit(run_job(Path(sys.argv[1]), render_probe))
