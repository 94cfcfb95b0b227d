"""One object's render, in its own process: `python -m vidbench.benchmarks.fourd.curate.worker
JOB.json` (written by render.py). bpy holds one global scene, and a crash inside Blender takes
only this process down.

As the 4D-Bench paper does (supplement B.1): render the first view up to ``max_frames`` frames,
find the start and end of motion by pixel change (motion.py), then render the other views over
that range. Writes OUT/<uid>/view_{k}_rgb_white_bg.mp4 and, last, OUT/<uid>/render.json (status
"rendered", or "dropped" with the reason: no animation, no motion). An asset that cannot be
rendered (cannot load, no mesh) gets OUT/<uid>/error.json and exit status 1.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

from vidbench.benchmarks.fourd.curate.cameras import ring
from vidbench.benchmarks.fourd.curate.motion import detect
from vidbench.benchmarks.fourd.curate.settings import RenderSettings
from vidbench.benchmarks.fourd.loader import RENDER_FILE
from vidbench.benchmarks.fourd.synthetic.writer import video_name
from vidbench.media.cache import write_atomic
from vidbench.media.encode import write_mp4

ERROR_FILE = "error.json"


def _write_json(path: Path, data: dict) -> None:
    write_atomic(path, (json.dumps(data, indent=1) + "\n").encode())


def render_object(uid: str, file: Path, folder: Path, settings: RenderSettings) -> dict:
    """Render one asset into ``folder``; returns the render.json record."""
    from vidbench.benchmarks.fourd.curate import blender_scene as blender

    record = {
        "uid": uid,
        "file": str(file),
        "blender": blender.blender_version(),
        "seed": settings.seed,
        "settings": settings.identity(),
    }
    blender.load(file, settings.fps)
    animation = blender.animation_range()
    if animation is None:
        return {**record, "status": "dropped", "reason": "no animation"}
    first = animation[0]
    last = min(animation[1], first + settings.max_frames - 1)
    record["animation_range"] = list(animation)
    record["normalisation"] = blender.normalise(range(first, last + 1))
    blender.setup(settings)
    cameras = ring(uid, settings.views, settings.seed)
    record["cameras"] = [c.to_json() for c in cameras]
    blender.place_camera(cameras[0].position)
    frames = list(blender.render_frames(range(first, last + 1)))
    motion = detect(frames, settings.motion)
    record["motion"] = motion.to_json()
    if not motion.moving:
        return {**record, "status": "dropped", "reason": "no motion"}
    start, end = first + motion.start, first + motion.end
    record["frame_range"] = [start, end]
    record["frames"] = end - start + 1
    record["motion_score"] = round(motion.score, 6)
    write_mp4(folder / video_name(0), frames[motion.start : motion.end + 1], fps=settings.fps)
    del frames
    for camera in cameras[1:]:
        blender.place_camera(camera.position)
        write_mp4(
            folder / video_name(camera.view),
            blender.render_frames(range(start, end + 1)),
            fps=settings.fps,
        )
    record["videos"] = [video_name(c.view) for c in cameras]
    return {**record, "status": "rendered"}


def _curate(job: dict, folder: Path) -> dict:
    settings = RenderSettings.from_json(job["settings"])
    return render_object(job["uid"], Path(job["file"]), folder, settings)


def run_job(job_path: Path, render: Callable[[dict, Path], dict] = _curate) -> int:
    """Render the object JOB.json names with ``render(job, folder)``; its record becomes
    render.json (exit status 0), an AssetError error.json (exit status 1)."""
    job = json.loads(job_path.read_text(encoding="utf-8"))
    folder = Path(job["out"]) / job["uid"]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ERROR_FILE).unlink(missing_ok=True)
    from vidbench.benchmarks.fourd.curate.blender_scene import AssetError

    try:
        record = render(job, folder)
    except AssetError as e:
        error = {"uid": job["uid"], "file": job["file"], "reason": e.reason, "detail": e.detail}
        _write_json(folder / ERROR_FILE, error)
        return 1
    _write_json(folder / RENDER_FILE, record)
    return 0


if __name__ == "__main__":
    sys.exit(run_job(Path(sys.argv[1])))
