"""The render workers of `curate 4d render`: one subprocess per object, at most N at a time,
their frame counts for the progress bar, and stopping them (the parent's side: `run_workers`);
and one object's render in such a subprocess, `python -m
vidbench.benchmarks.fourd.curate.workers JOB.json` (the worker's side: `run_job`). bpy holds one
global scene, and a crash inside Blender takes only its worker down.

Each worker runs in a session of its own, so a terminal's Ctrl-C (SIGINT to the foreground
process group) reaches only the parent: `run_workers` then starts no more workers, kills the
running ones (SIGTERM, then SIGKILL to their process groups) and raises KeyboardInterrupt, so the
caller records what finished. A worker whose parent dies (kill -9) stops by itself. The loop is
one thread that polls the workers a few times a second: Ctrl-C lands in it at once (a thread
pool's shutdown would wait for every queued object), and reading the workers' progress files
needs the same tick.

A worker renders as the 4D-Bench paper does (supplement B.1): the first view up to
``max_frames`` frames, the start and end of motion found by pixel change (motion.py), then the
other views over that range. It writes OUT/<uid>/view_{k}_rgb_white_bg.mp4 and, last,
OUT/<uid>/render.json (status "rendered", or "dropped" with the reason: no animation, no
motion). An asset that cannot be rendered (cannot load, no mesh) gets OUT/<uid>/error.json and
exit status 1. The frames rendered so far and the frames to render go to OUT/<uid>/.progress.json
as it goes (the parent's progress bar).
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from rich.progress import Progress, TaskID

from vidbench.benchmarks.fourd.curate.cameras import framed, ring
from vidbench.benchmarks.fourd.curate.manifest import Asset
from vidbench.benchmarks.fourd.curate.motion import detect
from vidbench.benchmarks.fourd.curate.settings import RenderSettings
from vidbench.benchmarks.fourd.loader import RENDER_FILE
from vidbench.benchmarks.fourd.synthetic.writer import video_name
from vidbench.core.files import write_json
from vidbench.media.encode import write_mp4

JOB_FILE = ".job.json"
LOG_FILE = "worker.log"
PROGRESS_FILE = ".progress.json"
POLL_S = 0.2
KILL_WAIT_S = 5.0  # after SIGTERM, before SIGKILL


@dataclass(frozen=True)
class RenderProcess:
    """One object to render: its folder (OUT/<uid>), what the worker reads, and the most frames
    it may render (the progress bar's guess until the worker knows)."""

    uid: str
    folder: Path
    spec: dict
    frames_at_most: int


class FrameBar:
    """Frames rendered over all objects, and objects finished, on a rich Progress. Each
    object's total starts at its upper bound and becomes exact once its worker knows its motion
    range (the first view is rendered in full, the others over the moving frames)."""

    def __init__(self, progress: Progress, jobs: Sequence[RenderProcess]) -> None:
        self.progress = progress
        self.totals = {job.uid: job.frames_at_most for job in jobs}
        self.done = dict.fromkeys(self.totals, 0)
        self.frames: TaskID = progress.add_task("rendering frames", total=sum(self.totals.values()))
        self.objects: TaskID = progress.add_task("objects", total=len(jobs))

    def read(self, job: RenderProcess) -> None:
        """The worker's last report (OUT/<uid>/.progress.json: done, total)."""
        try:
            report = json.loads((job.folder / PROGRESS_FILE).read_text(encoding="utf-8"))
            done, total = int(report["done"]), int(report["total"])
        except (OSError, ValueError, KeyError, TypeError):
            return  # not written yet
        self.done[job.uid], self.totals[job.uid] = done, max(total, done)
        self._show()

    def finished(self, job: RenderProcess) -> None:
        self.read(job)
        self.totals[job.uid] = self.done[job.uid]  # dropped early or failed: no more frames
        self.progress.advance(self.objects)
        self._show()

    def _show(self) -> None:
        self.progress.update(
            self.frames, total=sum(self.totals.values()), completed=sum(self.done.values())
        )


def _start(job: RenderProcess, command: Sequence[str]) -> subprocess.Popen:
    job.folder.mkdir(parents=True, exist_ok=True)
    (job.folder / PROGRESS_FILE).unlink(missing_ok=True)
    write_json(job.folder / JOB_FILE, job.spec, None)
    with open(job.folder / LOG_FILE, "wb") as log:
        return subprocess.Popen(
            [*command, str(job.folder / JOB_FILE)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # the terminal's Ctrl-C is the parent's to handle
        )


def _kill(running: dict[str, tuple[RenderProcess, subprocess.Popen]]) -> None:
    """SIGTERM to every worker's process group, SIGKILL to those still there after a while."""
    for _, process in running.values():
        _signal_group(process, signal.SIGTERM)
    deadline = time.monotonic() + KILL_WAIT_S
    for _, process in running.values():
        try:
            process.wait(max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _signal_group(process, signal.SIGKILL)
            process.wait()


def _signal_group(process: subprocess.Popen, sig: int) -> None:
    with suppress(ProcessLookupError):  # already gone
        os.killpg(process.pid, sig)  # the worker leads its session: its group is its pid


def run_workers(
    jobs: Sequence[RenderProcess],
    command: Sequence[str],
    parallel: int,
    on_done: Callable[[RenderProcess, int], None],
    bar: FrameBar | None = None,
) -> None:
    """Run ``command JOB.json`` for every job, ``parallel`` at a time; ``on_done(job,
    returncode)`` as each ends. On KeyboardInterrupt the running workers are killed, no more are
    started, and the interrupt goes on to the caller."""
    queue = list(jobs)
    running: dict[str, tuple[RenderProcess, subprocess.Popen]] = {}
    try:
        while queue or running:
            while queue and len(running) < max(1, parallel):
                job = queue.pop(0)
                running[job.uid] = (job, _start(job, command))
            for uid, (job, process) in list(running.items()):
                if process.poll() is None:
                    if bar is not None:
                        bar.read(job)
                    continue
                del running[uid]
                if bar is not None:
                    bar.finished(job)
                on_done(job, process.returncode)
            time.sleep(POLL_S)
    except BaseException:
        with _sigint_ignored():  # a second Ctrl-C does not cut the cleaning up short
            _kill(running)
        raise


@contextmanager
def _sigint_ignored() -> Iterator[None]:
    if threading.current_thread() is not threading.main_thread():
        yield  # only the main thread may set signal handlers (and only it gets SIGINT)
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


ERROR_FILE = "error.json"
PARENT_CHECK_S = 1.0
# What every `import bpy` prints under NumPy 2: the bpy wheel's fluid simulator (mantaflow) is
# built against NumPy 1.x and fails to load; rendering never uses it, the rest of bpy works.
NUMPY_1_BLOCK = re.compile(
    r"\n?A module that was compiled using NumPy 1\.x.*?"
    r"ImportError: numpy\.core\.multiarray failed to import\n",
    re.S,
)


class FrameCount:
    """Frames rendered and frames to render, in OUT/<uid>/.progress.json after every frame."""

    def __init__(self, path: Path | None, total: int) -> None:
        self.path, self.done, self.total = path, 0, total

    def expect(self, total: int) -> None:
        self.total = total
        self._write()

    def counted(self, frames: Iterable) -> Iterator:
        for frame in frames:
            self.done += 1
            self._write()
            yield frame

    def _write(self) -> None:
        if self.path is not None:
            write_json(self.path, {"done": self.done, "total": max(self.total, self.done)}, None)


def render_object(
    uid: str, file: Path, folder: Path, settings: RenderSettings, count: FrameCount | None = None
) -> dict:
    """Render one asset into ``folder``; returns the render.json record."""
    from vidbench.benchmarks.fourd.curate import blender_scene as blender

    count = count or FrameCount(None, settings.max_frames * settings.views)

    record = {
        "uid": uid,
        "file": str(file),
        "asset": Asset(uid, file).fingerprint(),
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
    count.expect((last - first + 1) * settings.views)  # at most: motion may be shorter
    record["animation_range"] = list(animation)
    record["normalisation"] = blender.normalise(range(first, last + 1))
    radius = record["bounding_radius"] = round(blender.bounding_radius(range(first, last + 1)), 6)
    blender.setup(settings)
    cameras = framed(ring(uid, settings.views, settings.seed), radius, settings.fill)
    record["cameras"] = [c.to_json() for c in cameras]
    blender.place_camera(cameras[0].position, cameras[0].fov)
    frames = list(count.counted(blender.render_frames(range(first, last + 1))))
    motion = detect(frames, settings.motion)
    record["motion"] = motion.to_json()
    if motion.start is None or motion.end is None:  # not moving
        return {**record, "status": "dropped", "reason": "no motion"}
    start, end = first + motion.start, first + motion.end
    count.expect(len(frames) + (end - start + 1) * (settings.views - 1))
    record["frame_range"] = [start, end]
    record["frames"] = end - start + 1
    record["motion_score"] = round(motion.score, 6)
    write_mp4(folder / video_name(0), frames[motion.start : motion.end + 1], fps=settings.fps)
    del frames
    for camera in cameras[1:]:
        blender.place_camera(camera.position, camera.fov)
        write_mp4(
            folder / video_name(camera.view),
            count.counted(blender.render_frames(range(start, end + 1))),
            fps=settings.fps,
        )
    record["videos"] = [video_name(c.view) for c in cameras]
    return {**record, "status": "rendered"}


def import_bpy() -> None:
    """Import bpy with everything it prints passed on, except the NumPy 1.x/2.x traceback of
    its unused fluid simulator, which would open every worker.log."""
    captured = io.StringIO()
    with contextlib.redirect_stderr(captured):
        import bpy  # noqa: F401
    text, removed = NUMPY_1_BLOCK.subn("", captured.getvalue())
    if removed:
        text += (
            "bpy: its fluid simulator (built for NumPy 1.x) is not loaded; renders do not use it\n"
        )
    sys.stderr.write(text)


def _exit_with_parent() -> None:
    """Stop this process when the parent that started it is gone."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(PARENT_CHECK_S)
        os._exit(3)  # the render is abandoned: no render.json, the next run redoes it

    threading.Thread(target=watch, daemon=True, name="parent-watch").start()


def _curate(job: dict, folder: Path, count: FrameCount) -> dict:
    settings = RenderSettings.from_json(job["settings"])
    return render_object(job["uid"], Path(job["file"]), folder, settings, count)


# render(job, folder, frame count) -> the render.json record (AssetError: error.json)
Render = Callable[[dict, Path, FrameCount], dict]


def run_job(job_path: Path, render: Render = _curate) -> int:
    """Render the object JOB.json names with ``render``; its record becomes render.json (exit
    status 0), an AssetError error.json (exit status 1); frames done go to .progress.json."""
    job = json.loads(job_path.read_text(encoding="utf-8"))
    folder = Path(job["out"]) / job["uid"]
    folder.mkdir(parents=True, exist_ok=True)
    (folder / ERROR_FILE).unlink(missing_ok=True)
    (folder / RENDER_FILE).unlink(missing_ok=True)  # complete only once this render is
    count = FrameCount(folder / PROGRESS_FILE, 0)  # the render says how many frames it has
    import_bpy()
    from vidbench.benchmarks.fourd.curate.blender_scene import AssetError

    try:
        record = render(job, folder, count)
    except AssetError as e:
        error = {"uid": job["uid"], "file": job["file"], "reason": e.reason, "detail": e.detail}
        write_json(folder / ERROR_FILE, error, indent=1)
        return 1
    write_json(folder / RENDER_FILE, record, indent=1)
    return 0


if __name__ == "__main__":
    _exit_with_parent()
    sys.exit(run_job(Path(sys.argv[1])))
