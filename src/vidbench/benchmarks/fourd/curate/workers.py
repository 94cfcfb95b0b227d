"""The render workers of `curate 4d render`: one subprocess per object (worker.py, a Blender of
its own), at most N at a time, their frame counts for the progress bar, and stopping them.

Each worker runs in a session of its own, so a terminal's Ctrl-C (SIGINT to the foreground
process group) reaches only the parent: `run_workers` then starts no more workers, kills the
running ones (SIGTERM, then SIGKILL to their process groups) and raises KeyboardInterrupt, so the
caller records what finished. A worker whose parent dies (kill -9) stops by itself (worker.py).

The loop is one thread that polls the workers a few times a second: Ctrl-C lands in it at once
(a thread pool's shutdown would wait for every queued object), and reading the workers' progress
files needs the same tick.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from rich.progress import Progress, TaskID

from vidbench.core.files import write_json

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
